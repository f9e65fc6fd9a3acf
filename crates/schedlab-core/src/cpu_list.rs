//! CPU numbers as workloads take them: a list in the kernel's and schbench's form (`0-3,8`), a
//! pair of CPUs for two tasks (`0,1`; `0,0` puts both on one CPU), or one CPU for each of N tasks
//! (`0,0,1,1`). Each parses, prints in the form
//! it parsed and checks that every CPU is one this process may run on. Stored as JSON arrays, so
//! runs stored before these types existed read the same.
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::{sys, Error, Result};

/// A sorted set of CPUs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "Vec<u32>", into = "Vec<u32>")]
pub struct CpuList(Vec<u32>);

impl From<CpuList> for Vec<u32> {
    fn from(list: CpuList) -> Self {
        list.0
    }
}

impl CpuList {
    /// The CPUs this process may run on (its affinity mask, within the online CPUs).
    pub fn allowed() -> Result<CpuList> {
        sys::allowed_cpus()
            .map(CpuList::from)
            .map_err(|e| Error::invalid(format!("cannot read the allowed CPUs: {e}")))
    }

    pub fn as_slice(&self) -> &[u32] {
        &self.0
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn contains(&self, cpu: u32) -> bool {
        self.0.binary_search(&cpu).is_ok()
    }

    /// Refuses an empty list or a CPU this process may not use; `key` names the parameter.
    pub fn check_allowed(&self, key: &'static str) -> Result<()> {
        if self.is_empty() {
            return Err(Error::param(key, "names no CPU"));
        }
        check_all_allowed(key, &self.0)
    }
}

impl From<Vec<u32>> for CpuList {
    fn from(mut cpus: Vec<u32>) -> Self {
        cpus.sort_unstable();
        cpus.dedup();
        CpuList(cpus)
    }
}

impl FromStr for CpuList {
    type Err = String;

    /// `0-3,8,10-11`, as the kernel writes CPU lists.
    fn from_str(text: &str) -> std::result::Result<Self, String> {
        let bad = || format!("expects a CPU list like 0-3,8, not {text:?}");
        let mut cpus = Vec::new();
        for part in text.split(',') {
            let part = part.trim();
            let (first, last) = match part.split_once('-') {
                Some((a, b)) => (a.trim(), b.trim()),
                None => (part, part),
            };
            let first: u32 = first.parse().map_err(|_| bad())?;
            let last: u32 = last.parse().map_err(|_| bad())?;
            if last < first || last as usize >= rustix::thread::CpuSet::MAX_CPU {
                return Err(bad());
            }
            cpus.extend(first..=last);
        }
        Ok(CpuList::from(cpus))
    }
}

impl fmt::Display for CpuList {
    /// The compact form: runs of consecutive CPUs as ranges.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cpus = &self.0;
        let mut i = 0;
        while i < cpus.len() {
            let mut j = i;
            while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
                j += 1;
            }
            if i > 0 {
                f.write_str(",")?;
            }
            if j == i {
                write!(f, "{}", cpus[i])?;
            } else {
                write!(f, "{}-{}", cpus[i], cpus[j])?;
            }
            i = j + 1;
        }
        Ok(())
    }
}

/// Two CPUs, one per task, in order; both may be the same CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CpuPair(pub [u32; 2]);

impl CpuPair {
    /// Refuses a CPU this process may not use; `key` names the parameter.
    pub fn check_allowed(&self, key: &'static str) -> Result<()> {
        check_all_allowed(key, &self.0)
    }
}

impl FromStr for CpuPair {
    type Err = String;

    fn from_str(text: &str) -> std::result::Result<Self, String> {
        let bad = || format!("expects two CPU numbers like 0,1, not {text:?}");
        let (a, b) = text.split_once(',').ok_or_else(bad)?;
        Ok(CpuPair([
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
        ]))
    }
}

impl fmt::Display for CpuPair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{}", self.0[0], self.0[1])
    }
}

/// One CPU per task, in task order; CPUs may repeat (`0,0`: two tasks on CPU 0).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CpuPerTask(pub Vec<u32>);

impl CpuPerTask {
    pub fn as_slice(&self) -> &[u32] {
        &self.0
    }

    /// Refuses an empty list or a CPU this process may not use; `key` names the parameter.
    pub fn check_allowed(&self, key: &'static str) -> Result<()> {
        if self.0.is_empty() {
            return Err(Error::param(key, "names no CPU"));
        }
        check_all_allowed(key, &self.0)
    }
}

impl FromStr for CpuPerTask {
    type Err = String;

    fn from_str(text: &str) -> std::result::Result<Self, String> {
        let bad = || format!("expects one CPU number per task like 0,0 or 0,1, not {text:?}");
        text.split(',')
            .map(|cpu| cpu.trim().parse::<u32>().map_err(|_| bad()))
            .collect::<std::result::Result<Vec<_>, _>>()
            .and_then(|cpus| {
                if cpus
                    .iter()
                    .any(|&c| c as usize >= rustix::thread::CpuSet::MAX_CPU)
                {
                    Err(bad())
                } else {
                    Ok(CpuPerTask(cpus))
                }
            })
    }
}

impl fmt::Display for CpuPerTask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cpus: Vec<String> = self.0.iter().map(u32::to_string).collect();
        f.write_str(&cpus.join(","))
    }
}

fn check_all_allowed(key: &'static str, cpus: &[u32]) -> Result<()> {
    let allowed = CpuList::allowed()?;
    match cpus.iter().find(|&&cpu| !allowed.contains(cpu)) {
        Some(cpu) => Err(Error::param(
            key,
            format!(
                "names CPU {cpu}, which is not online or not allowed here (allowed: {allowed})"
            ),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_and_print_in_the_kernels_form() {
        let list: CpuList = "0-3,8".parse().unwrap();
        assert_eq!(list.as_slice(), [0, 1, 2, 3, 8]);
        let list: CpuList = " 2 , 1,1".parse().unwrap();
        assert_eq!(list.as_slice(), [1, 2]);
        for bad in ["3-1", "x", "", "0,,1"] {
            assert!(bad.parse::<CpuList>().is_err(), "{bad}");
        }
        assert_eq!(
            CpuList::from(vec![11, 0, 1, 2, 3, 8, 10]).to_string(),
            "0-3,8,10-11"
        );
    }

    #[test]
    fn pairs_keep_their_order_and_may_repeat() {
        assert_eq!("0,1".parse::<CpuPair>().unwrap(), CpuPair([0, 1]));
        assert_eq!(" 3 , 3".parse::<CpuPair>().unwrap(), CpuPair([3, 3]));
        for bad in ["0", "0,x", "0,-1"] {
            assert!(bad.parse::<CpuPair>().is_err(), "{bad}");
        }
        assert_eq!(CpuPair([1, 0]).to_string(), "1,0");
    }

    #[test]
    fn per_task_lists_keep_their_order_and_repeats() {
        let cpus: CpuPerTask = "1, 0,0".parse().unwrap();
        assert_eq!(cpus.as_slice(), [1, 0, 0]);
        assert_eq!(cpus.to_string(), "1,0,0");
        for bad in ["", "0,", "0-1", "x", "99999"] {
            assert!(bad.parse::<CpuPerTask>().is_err(), "{bad}");
        }
        assert_eq!(
            serde_json::to_string(&CpuPerTask(vec![0, 0])).unwrap(),
            "[0,0]"
        );
        assert!(CpuPerTask(Vec::new()).check_allowed("cpus").is_err());
    }

    #[test]
    fn stored_as_arrays() {
        let list: CpuList = serde_json::from_str("[3, 1]").unwrap();
        assert_eq!(serde_json::to_string(&list).unwrap(), "[1,3]");
        let pair: CpuPair = serde_json::from_str("[1, 0]").unwrap();
        assert_eq!(serde_json::to_string(&pair).unwrap(), "[1,0]");
    }
}
