//! The rules of a scenario that depend on this machine, checked before anything runs: its CPUs,
//! every policy a group asks for (tried in a thread of its own, which exits with it: the
//! privilege, the priority range, SCHED_DEADLINE's admission control, whether this kernel takes an
//! EEVDF slice), the deadline groups' bandwidth together, and the cgroup controller the
//! scenario's cgroups need. Each refusal is one line naming the group and what to do.
use super::executor::sched_request;
use super::spec::{Group, Policy, Scenario};
use crate::sys::{self, CgroupVersion, CpuController, SchedRequest};

/// This kernel's release, for refusals that depend on it.
fn kernel_release() -> String {
    sys::read_text("/proc/sys/kernel/osrelease")
        .map(|r| r.trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

pub fn check_machine(scenario: &Scenario) -> Result<(), String> {
    let mut tried: Vec<SchedRequest> = Vec::new();
    for group in &scenario.group {
        if let Some(cpus) = &group.cpus {
            cpus.0
                .check_allowed("cpus")
                .map_err(|e| match e {
                    crate::Error::InvalidParam { reason, .. } => format!("{}: cpus {reason}", group.label()),
                    other => format!("{}: {other}", group.label()),
                })?;
        }
        let Some(request) = sched_request(group) else {
            continue;
        };
        if tried.contains(&request) {
            continue;
        }
        check_policy(group, request)?;
        tried.push(request);
    }
    check_deadline_bandwidth(scenario)?;
    check_cgroups(scenario, sys::cpu_controller())
}

/// `SCHED_FIFO priority 50`, `SCHED_OTHER nice -5`, as refusals name a policy.
fn describe(group: &Group) -> String {
    let name = group.policy.kernel_name();
    match group.policy {
        Policy::Fifo | Policy::Rr => format!("{name} priority {}", group.priority.unwrap_or(0)),
        Policy::Other | Policy::Batch if group.nice.is_some_and(|n| n != 0) => {
            format!("{name} nice {}", group.nice.unwrap_or(0))
        }
        Policy::Deadline => format!(
            "{name} runtime {} period {}",
            group.runtime.map(|r| r.to_string()).unwrap_or_default(),
            group.period.map(|p| p.to_string()).unwrap_or_default()
        ),
        _ => name.to_string(),
    }
}

fn check_policy(group: &Group, request: SchedRequest) -> Result<(), String> {
    let label = group.label();
    let what = describe(group);
    let got = match sys::probe_sched(request) {
        Ok(got) => got,
        Err(e) => {
            let errno = e.raw_os_error();
            return Err(match (group.policy, errno) {
                (Policy::Fifo | Policy::Rr, Some(libc::EPERM)) => format!(
                    "{label}: {what} is not permitted to this user: real-time policies need \
                     root, CAP_SYS_NICE or an RLIMIT_RTPRIO of at least {} (`ulimit -r`)",
                    group.priority.unwrap_or(0)
                ),
                (Policy::Deadline, Some(libc::EPERM)) => format!(
                    "{label}: {what} is not permitted: SCHED_DEADLINE needs root or CAP_SYS_NICE, \
                     and schedlab's CPU affinity must cover its root domain (not under taskset)"
                ),
                (Policy::Deadline, Some(libc::EBUSY)) => format!(
                    "{label}: {what} was refused by the kernel's deadline admission control: \
                     the bandwidth is taken (sched_rt_runtime_us, other deadline tasks)"
                ),
                (_, Some(libc::EPERM)) => format!(
                    "{label}: {what} is not permitted to this user: a negative nice needs root, \
                     CAP_SYS_NICE or RLIMIT_NICE (`ulimit -e`)"
                ),
                _ => format!("{label}: the kernel refused {what}: {e}"),
            });
        }
    };
    if let Some(slice) = group.slice {
        if got.attr.runtime_ns != slice.ns() {
            return Err(format!(
                "{label}: this kernel ({}) takes no EEVDF slice (sched_attr.sched_runtime on {} \
                 needs Linux 6.12 or later); leave out slice",
                kernel_release(),
                group.policy.kernel_name()
            ));
        }
    }
    Ok(())
}

/// The deadline groups' bandwidth together against what the kernel admits on all CPUs
/// (sched_rt_runtime_us of every sched_rt_period_us on each online CPU).
fn check_deadline_bandwidth(scenario: &Scenario) -> Result<(), String> {
    let asked: f64 = scenario
        .group
        .iter()
        .filter(|g| g.policy == Policy::Deadline)
        .map(|g| {
            let runtime = g.runtime.map_or(0, |r| r.ns()) as f64;
            let period = g.period.map_or(1, |p| p.ns()).max(1) as f64;
            g.count.0 as f64 * runtime / period
        })
        .sum();
    if asked == 0.0 {
        return Ok(());
    }
    let read = |name: &str| {
        sys::read_text(&format!("/proc/sys/kernel/{name}")).and_then(|t| t.trim().parse::<i64>().ok())
    };
    let (Some(runtime), Some(period)) = (read("sched_rt_runtime_us"), read("sched_rt_period_us"))
    else {
        return Ok(());
    };
    if runtime < 0 || period <= 0 {
        return Ok(());
    }
    let cpus = f64::from(crate::fingerprint::online_cpu_count());
    let admitted = cpus * runtime as f64 / period as f64;
    if asked > admitted {
        return Err(format!(
            "the deadline groups reserve {asked:.2} CPUs of bandwidth together, more than this \
             machine admits ({admitted:.2}: {cpus} CPUs × sched_rt_runtime_us {runtime} / \
             sched_rt_period_us {period})"
        ));
    }
    Ok(())
}

/// The scenario's cgroups against `controller`, the cpu controller this machine mounts.
fn check_cgroups(scenario: &Scenario, controller: Option<CpuController>) -> Result<(), String> {
    if scenario.cgroup.is_empty() {
        return Ok(());
    }
    let Some(controller) = controller else {
        return Err(
            "the scenario's cgroups need the cgroup cpu controller, which this machine does not \
             mount (neither a cgroup v1 `cpu` hierarchy nor cgroup v2 with `cpu`)"
                .into(),
        );
    };
    if let Some(why) = controller.unusable() {
        return Err(format!("the scenario's cgroups: {why}"));
    }
    if scenario.cgroup.values().any(|c| c.idle.is_some()) && !controller.has_file("cpu.idle") {
        return Err(format!(
            "this kernel ({}) has no cpu.idle (Linux 5.15 on); leave out idle",
            kernel_release()
        ));
    }
    // With CONFIG_RT_GROUP_SCHED (v1's cpu.rt_runtime_us) a new cgroup has no real-time
    // bandwidth, and the kernel refuses real-time tasks in it.
    if controller.version == CgroupVersion::V1 && controller.has_file("cpu.rt_runtime_us") {
        if let Some(group) = scenario
            .group
            .iter()
            .find(|g| g.cgroup.is_some() && matches!(g.policy, Policy::Fifo | Policy::Rr))
        {
            return Err(format!(
                "{}: a real-time task in a cgroup needs real-time bandwidth of its own on this \
                 kernel (CONFIG_RT_GROUP_SCHED: cpu.rt_runtime_us), which schedlab does not give \
                 its cgroups; leave the group out of the cgroup",
                group.label()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::scenario::spec::from_toml;

    fn with_cgroup(settings: &str, group: &str) -> Scenario {
        from_toml(&format!(
            "duration = \"1s\"\n[cgroup.c]\n{settings}\n[[group]]\nname = \"g\"\ncgroup = \"c\"\n{group}\nphases = [\"yield\"]\n"
        ))
        .unwrap()
    }

    #[test]
    fn cgroups_need_a_controller_that_is_mounted_and_writable() {
        let scenario = with_cgroup("weight = 50", "");
        let err = check_cgroups(&scenario, None).unwrap_err();
        assert!(err.contains("does not mount"), "{err}");
        let nowhere = CpuController {
            version: CgroupVersion::V2,
            root: "/nonexistent/schedlab".into(),
        };
        let err = check_cgroups(&scenario, Some(nowhere)).unwrap_err();
        assert!(err.contains("not writable"), "{err}");
        // No cgroups, no controller needed.
        let plain = from_toml("duration = \"1s\"\n[[group]]\nname = \"g\"\nphases = [\"yield\"]\n").unwrap();
        check_cgroups(&plain, None).unwrap();
    }

    #[test]
    fn a_real_time_group_in_a_cgroup_needs_its_own_bandwidth_where_the_kernel_asks() {
        let controller = sys::cpu_controller().expect("a cgroup cpu controller (run as root)");
        let scenario = with_cgroup("", "policy = \"fifo\"\npriority = 5");
        let result = check_cgroups(&scenario, Some(controller.clone()));
        if controller.version == CgroupVersion::V1 && controller.has_file("cpu.rt_runtime_us") {
            assert!(result.unwrap_err().contains("CONFIG_RT_GROUP_SCHED"));
        }
    }

    /// A slice is taken from 6.12 on and refused, naming the kernel, before.
    #[test]
    fn an_eevdf_slice_is_taken_where_the_kernel_has_it() {
        let scenario = from_toml(
            "duration = \"1s\"\n[[group]]\nname = \"g\"\nslice = \"2ms\"\nphases = [\"yield\"]\n",
        )
        .unwrap();
        let release = kernel_release();
        let mut numbers = release.split(|c: char| !c.is_ascii_digit());
        let major: u32 = numbers.next().and_then(|n| n.parse().ok()).unwrap();
        let minor: u32 = numbers.next().and_then(|n| n.parse().ok()).unwrap();
        match check_machine(&scenario) {
            Ok(()) => assert!((major, minor) >= (6, 12), "{release}"),
            Err(e) => {
                assert!((major, minor) < (6, 12), "{release}: {e}");
                assert!(e.contains(&format!("this kernel ({release}) takes no EEVDF slice")), "{e}");
            }
        }
    }

    #[test]
    fn policies_are_tried_before_anything_runs() {
        let scenario = from_toml(
            "duration = \"1s\"\n[[group]]\nname = \"g\"\npolicy = \"fifo\"\npriority = 99\nphases = [\"yield\"]\n",
        )
        .unwrap();
        // Allowed to root (as CI runs); refused, naming the privilege, to others.
        match check_machine(&scenario) {
            Ok(()) => {}
            Err(e) => {
                assert!(!sys::effective_uid_is_root(), "{e}");
                assert!(e.contains("not permitted"), "{e}");
            }
        }
        let too_much = from_toml(
            "duration = \"1s\"\n[[group]]\nname = \"g\"\ncount = 64\npolicy = \"deadline\"\nruntime = \"9ms\"\nperiod = \"10ms\"\nphases = [\"yield\"]\n",
        )
        .unwrap();
        let err = check_machine(&too_much).unwrap_err();
        assert!(err.contains("more than this machine admits"), "{err}");
    }
}
