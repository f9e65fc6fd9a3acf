//! The QEMU command line of a guest, from what the campaign asked for: the accelerator, vCPUs,
//! memory, NUMA nodes, KVM's steal time, the kernel and its command line, and the two serial
//! ports (the kernel's console, the results). Pure, so the line a run stores is the line a test
//! checks.
use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::cpu_list::CpuList;

/// How QEMU runs the guest's CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Accel {
    /// The host's CPU, through the kernel's KVM: timings are the guest kernel's.
    Kvm,
    /// QEMU's own translator, emulating every instruction: it checks the mechanism, NUMA layouts
    /// and functional differences; its timings are the emulator's.
    Tcg,
}

impl Accel {
    pub fn as_str(self) -> &'static str {
        match self {
            Accel::Kvm => "kvm",
            Accel::Tcg => "tcg",
        }
    }
}

impl fmt::Display for Accel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The guest's NUMA nodes: the vCPUs of each, in node order; memory is split evenly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NumaLayout {
    pub nodes: Vec<CpuList>,
}

/// The most nodes a layout may have (QEMU's MAX_NODES is 128; more than the vCPUs is refused).
pub const MAX_NUMA_NODES: usize = 64;

impl NumaLayout {
    /// `N`: N nodes, the vCPUs dealt out in order, as evenly as they go (4 vCPUs on 2 nodes:
    /// 0-1 and 2-3); or `0-1/2-3`: each node's vCPUs, `/` between nodes. Every vCPU is on
    /// exactly one node and every node has one.
    pub fn parse(text: &str, vcpus: u32) -> Result<Self, String> {
        let nodes: Vec<CpuList> = if let Ok(count) = text.trim().parse::<u32>() {
            if count < 1 || count > vcpus || count as usize > MAX_NUMA_NODES {
                return Err(format!(
                    "--numa {count}: a guest of {vcpus} vCPUs can have 1 to {} nodes",
                    vcpus.min(MAX_NUMA_NODES as u32)
                ));
            }
            (0..count)
                .map(|node| {
                    let first = node * vcpus / count;
                    let end = (node + 1) * vcpus / count;
                    CpuList::from((first..end).collect::<Vec<u32>>())
                })
                .collect()
        } else {
            text.split('/')
                .map(|node| node.parse::<CpuList>().map_err(|e| format!("--numa {e}")))
                .collect::<Result<_, _>>()?
        };
        if nodes.len() > MAX_NUMA_NODES {
            return Err(format!("--numa: at most {MAX_NUMA_NODES} nodes"));
        }
        let mut seen = vec![false; vcpus as usize];
        for cpu in nodes.iter().flat_map(|n| n.as_slice()) {
            let Some(slot) = seen.get_mut(*cpu as usize) else {
                return Err(format!(
                    "--numa {text}: vCPU {cpu} does not exist (the guest has vCPUs 0-{})",
                    vcpus - 1
                ));
            };
            if *slot {
                return Err(format!("--numa {text}: vCPU {cpu} is on two nodes"));
            }
            *slot = true;
        }
        if let Some(missing) = seen.iter().position(|s| !s) {
            return Err(format!("--numa {text}: vCPU {missing} is on no node"));
        }
        Ok(NumaLayout { nodes })
    }

    /// `0-1/2-3`, the form [`NumaLayout::parse`] reads.
    pub fn describe(&self) -> String {
        self.nodes
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("/")
    }
}

/// What one guest boot is.
#[derive(Debug, Clone)]
pub struct Machine<'a> {
    /// The QEMU program (`qemu-system-x86_64`, or a path).
    pub qemu: &'a str,
    /// The name QEMU shows (its vCPU threads are named after their CPUs with debug-threads).
    pub name: &'a str,
    pub accel: Accel,
    pub vcpus: u32,
    pub memory_mib: u64,
    pub numa: Option<&'a NumaLayout>,
    /// KVM's paravirtual steal time (and with it `vcpu_is_preempted()`); `false` hides it from
    /// the guest. TCG has no KVM features, so it is not asked for there.
    pub steal_time: bool,
    pub kernel: &'a Path,
    pub initrd: &'a Path,
    /// Appended to [`BASE_APPEND`]; a parameter given twice takes its last value.
    pub append: &'a str,
    /// The file the kernel's console (ttyS0) goes to.
    pub console: &'a Path,
    /// The file the guest's messages (ttyS1) go to.
    pub results: &'a Path,
}

/// The kernel command line every guest gets, before the campaign's own: the console on the first
/// serial port; schedlab's binary as init; a panic restarts at once, which `-no-reboot` turns
/// into QEMU's exit (so a guest that panics ends its slot without waiting for the deadline).
pub const BASE_APPEND: &str = "console=ttyS0 rdinit=/init panic=-1";

/// The command line, program first.
pub fn command_line(m: &Machine<'_>) -> Vec<String> {
    let mut argv: Vec<String> = vec![m.qemu.to_string()];
    let mut push = |args: &[&str]| argv.extend(args.iter().map(|a| a.to_string()));
    // No default devices (network card, VGA, parallel port, monitor), no configuration files,
    // no window; a reboot ends QEMU.
    push(&[
        "-nodefaults",
        "-no-user-config",
        "-display",
        "none",
        "-no-reboot",
    ]);
    push(&["-name", &format!("{},debug-threads=on", m.name)]);
    match m.accel {
        Accel::Kvm => {
            push(&["-accel", "kvm"]);
            let cpu = if m.steal_time {
                "host".to_string()
            } else {
                "host,kvm-steal-time=off".to_string()
            };
            push(&["-cpu", &cpu]);
        }
        Accel::Tcg => {
            // One thread translates every vCPU: boots with thread=multi panicked early now and
            // then (2 of 37 on QEMU 7.2, an int3 Oops in sched_clock_cpu), none of 12 with single.
            push(&["-accel", "tcg,thread=single"]);
            push(&["-cpu", "max"]);
        }
    }
    let smp = match m.numa {
        // A socket per node, when the vCPUs divide evenly, so the guest's topology agrees with
        // its nodes.
        Some(numa)
            if numa.nodes.iter().all(|n| n.len() == numa.nodes[0].len())
                && numa.nodes.len() > 1 =>
        {
            format!(
                "{},sockets={},cores={},threads=1",
                m.vcpus,
                numa.nodes.len(),
                numa.nodes[0].len()
            )
        }
        _ => m.vcpus.to_string(),
    };
    push(&["-smp", &smp, "-m", &format!("{}M", m.memory_mib)]);
    if let Some(numa) = m.numa {
        let count = numa.nodes.len() as u64;
        for (node, cpus) in numa.nodes.iter().enumerate() {
            // Every node a share of the memory, the first ones a MiB more until it is all given.
            let share = m.memory_mib / count + u64::from((node as u64) < m.memory_mib % count);
            push(&[
                "-object",
                &format!("memory-backend-ram,id=node{node}-ram,size={share}M"),
            ]);
            let cpus: String = cpus
                .to_string()
                .split(',')
                .map(|range| format!(",cpus={range}"))
                .collect();
            push(&[
                "-numa",
                &format!("node,nodeid={node}{cpus},memdev=node{node}-ram"),
            ]);
        }
    }
    let append = if m.append.trim().is_empty() {
        BASE_APPEND.to_string()
    } else {
        format!("{BASE_APPEND} {}", m.append.trim())
    };
    push(&[
        "-kernel",
        &m.kernel.display().to_string(),
        "-initrd",
        &m.initrd.display().to_string(),
        "-append",
        &append,
    ]);
    push(&[
        "-serial",
        &format!("file:{}", m.console.display()),
        "-serial",
        &format!("file:{}", m.results.display()),
    ]);
    argv
}

/// A command line as one line a shell would take back (arguments with spaces or quotes quoted).
pub fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|word| {
            let plain = !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_=+,./:@%".contains(c));
            if plain {
                word.clone()
            } else {
                format!("'{}'", word.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn machine<'a>(numa: Option<&'a NumaLayout>, paths: &'a [PathBuf; 4]) -> Machine<'a> {
        Machine {
            qemu: "qemu-system-x86_64",
            name: "schedlab-c-slot1",
            accel: Accel::Tcg,
            vcpus: 4,
            memory_mib: 1025,
            numa,
            steal_time: true,
            kernel: &paths[0],
            initrd: &paths[1],
            append: " quiet ",
            console: &paths[2],
            results: &paths[3],
        }
    }

    fn paths() -> [PathBuf; 4] {
        ["/k/vmlinuz", "/w/initrd", "/w/console.log", "/w/results"].map(PathBuf::from)
    }

    fn after<'a>(argv: &'a [String], flag: &str) -> Vec<&'a str> {
        argv.windows(2)
            .filter(|w| w[0] == flag)
            .map(|w| w[1].as_str())
            .collect()
    }

    #[test]
    fn a_tcg_guest() {
        let paths = paths();
        let argv = command_line(&machine(None, &paths));
        assert_eq!(argv[0], "qemu-system-x86_64");
        assert_eq!(after(&argv, "-accel"), ["tcg,thread=single"]);
        assert_eq!(after(&argv, "-smp"), ["4"]);
        assert_eq!(after(&argv, "-m"), ["1025M"]);
        assert_eq!(
            after(&argv, "-append"),
            ["console=ttyS0 rdinit=/init panic=-1 quiet"]
        );
        assert_eq!(
            after(&argv, "-serial"),
            ["file:/w/console.log", "file:/w/results"]
        );
        assert!(argv.contains(&"-no-reboot".to_string()));
        assert!(argv.contains(&"-nodefaults".to_string()));
        assert!(after(&argv, "-numa").is_empty());
    }

    #[test]
    fn a_kvm_guest_with_and_without_steal_time() {
        let paths = paths();
        let mut m = machine(None, &paths);
        m.accel = Accel::Kvm;
        assert_eq!(after(&command_line(&m), "-cpu"), ["host"]);
        assert_eq!(after(&command_line(&m), "-accel"), ["kvm"]);
        m.steal_time = false;
        assert_eq!(
            after(&command_line(&m), "-cpu"),
            ["host,kvm-steal-time=off"]
        );
    }

    #[test]
    fn numa_nodes_split_vcpus_and_memory() {
        let paths = paths();
        let numa = NumaLayout::parse("2", 4).unwrap();
        assert_eq!(numa.describe(), "0-1/2-3");
        let argv = command_line(&machine(Some(&numa), &paths));
        assert_eq!(after(&argv, "-smp"), ["4,sockets=2,cores=2,threads=1"]);
        assert_eq!(
            after(&argv, "-object"),
            [
                "memory-backend-ram,id=node0-ram,size=513M",
                "memory-backend-ram,id=node1-ram,size=512M"
            ]
        );
        assert_eq!(
            after(&argv, "-numa"),
            [
                "node,nodeid=0,cpus=0-1,memdev=node0-ram",
                "node,nodeid=1,cpus=2-3,memdev=node1-ram"
            ]
        );
        let uneven = NumaLayout::parse("0,2-3/1", 4).unwrap();
        let argv = command_line(&machine(Some(&uneven), &paths));
        assert_eq!(after(&argv, "-smp"), ["4"]);
        assert_eq!(
            after(&argv, "-numa")[0],
            "node,nodeid=0,cpus=0,cpus=2-3,memdev=node0-ram"
        );
    }

    #[test]
    fn numa_layouts_cover_every_vcpu_once() {
        assert_eq!(NumaLayout::parse("3", 4).unwrap().describe(), "0/1/2-3");
        assert_eq!(NumaLayout::parse("1", 2).unwrap().describe(), "0-1");
        for (text, why) in [
            ("0", "1 to 4 nodes"),
            ("5", "1 to 4 nodes"),
            ("0-1/1-3", "vCPU 1 is on two nodes"),
            ("0-1/3", "vCPU 2 is on no node"),
            ("0-1/2-4", "vCPU 4 does not exist"),
            ("0-1/x", "CPU list"),
        ] {
            let err = NumaLayout::parse(text, 4).unwrap_err();
            assert!(err.contains(why), "{text}: {err}");
        }
    }

    #[test]
    fn shell_words_quote_what_a_shell_would_split() {
        let argv: Vec<String> = ["qemu", "-append", "console=ttyS0 it's", "-m", "512M"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            shell_words(&argv),
            r"qemu -append 'console=ttyS0 it'\''s' -m 512M"
        );
    }
}
