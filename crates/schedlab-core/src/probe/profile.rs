//! `--profile`: where one iteration's CPU time went. cpu-clock samples (a software event every
//! machine has; `perf record`'s fallback where there is no PMU) of the runner thread and every
//! task it creates, each CPU's into a preallocated ring read after the iteration, then resolved:
//! kernel addresses through /proc/kallsyms, user addresses through the ELF symbol tables of the
//! files mapped at them (/proc/self/maps: the tasks are this process's threads or its forks, so
//! they share its mappings). A release build of schedlab is stripped, so its own functions stay
//! unresolved (`[schedlab]`); the `profiling` build keeps them; the C library's exported
//! functions resolve from its dynamic symbols in the glibc build. Programs `external` runs have
//! mappings of their own, gone when they exit: their samples are `[unknown]`.
use std::collections::HashMap;

use object::{Object, ObjectSegment, ObjectSymbol, ObjectSymbolTable};

use super::records::{walk, Sample};
use crate::sys;

/// Samples per second of CPU time; odd, so the sampling does not beat with a periodic workload.
pub const FREQUENCY_HZ: u64 = 3_997;
/// How many symbols are kept: the rest are summed as `[other]`.
pub const TOP_SYMBOLS: usize = 30;

/// Where a symbol was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    Kernel,
    User,
    /// An address no symbol table covered: the name says which file or space it was in.
    Unresolved,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Kernel => "kernel",
            Origin::User => "user",
            Origin::Unresolved => "unresolved",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "kernel" => Some(Origin::Kernel),
            "user" => Some(Origin::User),
            "unresolved" => Some(Origin::Unresolved),
            _ => None,
        }
    }
}

/// One symbol of a profile and its share of the samples.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ProfileSymbol {
    pub rank: u32,
    pub symbol: String,
    /// The file it is in (`[kernel.kallsyms]` for the kernel).
    pub module: String,
    pub origin: Origin,
    pub samples: u64,
    pub share_pct: f64,
}

/// Sorted symbol starts of one address space.
#[derive(Debug, Default)]
struct Symbols {
    starts: Vec<(u64, String)>,
}

impl Symbols {
    fn sort(mut self) -> Self {
        self.starts.sort_by_key(|(a, _)| *a);
        self
    }

    /// The symbol whose start is the greatest at or below `address`.
    fn find(&self, address: u64) -> Option<&str> {
        let i = self.starts.partition_point(|(a, _)| *a <= address);
        (i > 0).then(|| self.starts[i - 1].1.as_str())
    }
}

/// /proc/kallsyms' text and data symbols; empty when its addresses are hidden (all zero,
/// kptr_restrict for a reader without CAP_SYSLOG).
fn kernel_symbols(text: &str) -> Symbols {
    let starts = text
        .lines()
        .filter_map(|line| {
            let mut parts = line.split_whitespace();
            let address = u64::from_str_radix(parts.next()?, 16).ok()?;
            let kind = parts.next()?;
            let name = parts.next()?;
            (address != 0 && matches!(kind, "t" | "T" | "w" | "W")).then(|| (address, name.into()))
        })
        .collect();
    Symbols { starts }.sort()
}

/// One executable mapping of /proc/self/maps.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mapping {
    start: u64,
    end: u64,
    offset: u64,
    path: String,
}

fn executable_mappings(text: &str) -> Vec<Mapping> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.split_whitespace();
            let (start, end) = parts.next()?.split_once('-')?;
            let perms = parts.next()?;
            let offset = u64::from_str_radix(parts.next()?, 16).ok()?;
            let path = parts.nth(2).unwrap_or("").to_string();
            perms.contains('x').then_some(Mapping {
                start: u64::from_str_radix(start, 16).ok()?,
                end: u64::from_str_radix(end, 16).ok()?,
                offset,
                path,
            })
        })
        .collect()
}

/// An ELF file's function symbols (the symbol table, else the dynamic one) and its loadable
/// segments' (file offset, virtual address) pairs; `None` when it cannot be read.
struct Elf {
    symbols: Symbols,
    segments: Vec<(u64, u64, u64)>,
}

fn read_elf(path: &str) -> Option<Elf> {
    let data = std::fs::read(path).ok()?;
    let file = object::File::parse(&*data).ok()?;
    let table = file.symbol_table().or_else(|| file.dynamic_symbol_table());
    let starts = table
        .map(|t| {
            t.symbols()
                .filter(|s| s.kind() == object::SymbolKind::Text && s.address() != 0)
                .filter_map(|s| {
                    let name = s.name().ok()?;
                    Some((s.address(), rustc_demangle::demangle(name).to_string()))
                })
                .collect()
        })
        .unwrap_or_default();
    let segments = file
        .segments()
        .filter_map(|s| {
            let (offset, size) = s.file_range();
            Some((offset, size, s.address())).filter(|_| size > 0)
        })
        .collect();
    Some(Elf {
        symbols: Symbols { starts }.sort(),
        segments,
    })
}

/// A file's short name for display: `libc.so.6`, `schedlab`.
fn short(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).to_string()
}

/// Resolves sampled addresses; files are read once each.
struct Resolver {
    kernel: Symbols,
    mappings: Vec<Mapping>,
    files: HashMap<String, Option<Elf>>,
}

impl Resolver {
    fn new() -> Self {
        Resolver {
            kernel: kernel_symbols(&sys::read_text("/proc/kallsyms").unwrap_or_default()),
            mappings: executable_mappings(&sys::read_text("/proc/self/maps").unwrap_or_default()),
            files: HashMap::new(),
        }
    }

    fn resolve(&mut self, sample: &Sample<'_>) -> (String, String, Origin) {
        let ip = sample.ip.unwrap_or(0);
        // perf's cpumode: 1 kernel, 2 user, 3 hypervisor, 4/5 guest.
        if sample.cpumode == 1 {
            let module = "[kernel.kallsyms]".to_string();
            return match self.kernel.find(ip) {
                Some(name) => (name.to_string(), module, Origin::Kernel),
                None => ("[kernel]".into(), module, Origin::Unresolved),
            };
        }
        let Some(mapping) = self
            .mappings
            .iter()
            .find(|m| (m.start..m.end).contains(&ip))
            .cloned()
        else {
            return ("[unknown]".into(), "[unknown]".into(), Origin::Unresolved);
        };
        let module = short(&mapping.path);
        let elf = self
            .files
            .entry(mapping.path.clone())
            .or_insert_with(|| read_elf(&mapping.path));
        let file_offset = ip - mapping.start + mapping.offset;
        let address = elf.as_ref().and_then(|elf| {
            elf.segments
                .iter()
                .find(|(offset, size, _)| (*offset..offset + size).contains(&file_offset))
                .map(|(offset, _, vaddr)| file_offset - offset + vaddr)
        });
        match (elf, address) {
            (Some(elf), Some(address)) => match elf.symbols.find(address) {
                Some(name) => (name.to_string(), module, Origin::User),
                None => (format!("[{module}]"), module, Origin::Unresolved),
            },
            _ => (format!("[{module}]"), module, Origin::Unresolved),
        }
    }
}

/// A profile: the samples of the runner thread and its tasks, by symbol, the `TOP_SYMBOLS`
/// largest first and the rest as `[other]`.
pub fn symbolize(rings: &[sys::CpuRecords]) -> (Vec<ProfileSymbol>, u64) {
    let mut resolver = Resolver::new();
    let mut counts: HashMap<(String, String, Origin), u64> = HashMap::new();
    let mut total = 0u64;
    for ring in rings {
        for sample in walk(&ring.bytes, true, false).samples {
            *counts.entry(resolver.resolve(&sample)).or_default() += 1;
            total += 1;
        }
    }
    let mut sorted: Vec<((String, String, Origin), u64)> = counts.into_iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0 .0.cmp(&b.0 .0)));
    let share = |n: u64| 100.0 * n as f64 / total.max(1) as f64;
    let mut symbols: Vec<ProfileSymbol> = sorted
        .iter()
        .take(TOP_SYMBOLS)
        .enumerate()
        .map(|(i, ((symbol, module, origin), n))| ProfileSymbol {
            rank: i as u32 + 1,
            symbol: symbol.clone(),
            module: module.clone(),
            origin: *origin,
            samples: *n,
            share_pct: share(*n),
        })
        .collect();
    let rest: u64 = sorted.iter().skip(TOP_SYMBOLS).map(|(_, n)| n).sum();
    if rest > 0 {
        symbols.push(ProfileSymbol {
            rank: symbols.len() as u32 + 1,
            symbol: "[other]".into(),
            module: String::new(),
            origin: Origin::Unresolved,
            samples: rest,
            share_pct: share(rest),
        });
    }
    (symbols, total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_symbols_are_found_by_the_nearest_start_below() {
        let symbols = kernel_symbols(
            "ffffffff81000000 T _stext\nffffffff81000100 t do_one\n\
             ffffffff81000200 D some_data\nffffffff81000300 T schedule\n",
        );
        assert_eq!(symbols.find(0xffffffff81000150), Some("do_one"));
        assert_eq!(
            symbols.find(0xffffffff81000250),
            Some("do_one"),
            "data is not code"
        );
        assert_eq!(symbols.find(0xffffffff81000300), Some("schedule"));
        assert_eq!(symbols.find(0x10), None);
        assert!(kernel_symbols("0000000000000000 T _stext\n")
            .starts
            .is_empty());
    }

    #[test]
    fn only_executable_mappings_are_kept() {
        let maps = "55d0c0000000-55d0c0100000 r--p 00000000 fe:01 123 /usr/bin/schedlab\n\
                    55d0c0100000-55d0c0500000 r-xp 00100000 fe:01 123 /usr/bin/schedlab\n\
                    7f0000000000-7f0000001000 r-xp 00000000 00:00 0 \n";
        let m = executable_mappings(maps);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].offset, 0x100000);
        assert_eq!(m[0].path, "/usr/bin/schedlab");
        assert_eq!(m[1].path, "");
    }

    /// This test binary is not stripped: a function of it resolves by its own address.
    #[test]
    fn resolves_an_address_of_this_binary() {
        let mut resolver = Resolver::new();
        let ip = resolves_an_address_of_this_binary as *const () as usize as u64;
        let sample = Sample {
            cpumode: 2,
            ip: Some(ip + 4),
            pid: 1,
            tid: 1,
            time_ns: 0,
            raw: None,
        };
        let (symbol, _, origin) = resolver.resolve(&sample);
        assert_eq!(origin, Origin::User, "{symbol}");
        assert!(
            symbol.contains("resolves_an_address_of_this_binary"),
            "{symbol}"
        );
    }
}
