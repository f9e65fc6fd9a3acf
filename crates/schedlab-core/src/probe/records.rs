//! Reading what the kernel wrote: a tracepoint's format (tracefs `events/<system>/<name>/format`:
//! each field's offset, size and sign, which differ between kernels) and the perf records of a
//! ring, decoded into the scheduler and system-call events the explanation needs. Pure: the bytes
//! come from `sys::PerCpuSampler`, after the events were disabled.
use std::collections::HashMap;

/// One field of a tracepoint's raw record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub offset: usize,
    pub size: usize,
    /// A `__data_loc` field: the u32 at `offset` holds the data's length (high 16 bits) and
    /// offset (low 16 bits) in the record.
    pub data_loc: bool,
}

/// A tracepoint's id and fields, by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Format {
    pub id: u64,
    pub fields: HashMap<String, Field>,
}

/// Parses a tracefs `format` file; `None` when it has no id.
pub fn parse_format(text: &str) -> Option<Format> {
    let mut id = None;
    let mut fields = HashMap::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("ID:") {
            id = rest.trim().parse().ok();
            continue;
        }
        let Some(rest) = line.strip_prefix("field:") else {
            continue;
        };
        // field:<type> <name>[<n>];	offset:<o>;	size:<s>;	signed:<0|1>;
        let mut parts = rest.split(';').map(str::trim);
        let Some(declaration) = parts.next() else {
            continue;
        };
        let data_loc = declaration.starts_with("__data_loc");
        let Some(name) = declaration
            .rsplit(' ')
            .next()
            .map(|n| n.split('[').next().unwrap_or(n))
        else {
            continue;
        };
        let mut offset = None;
        let mut size = None;
        for part in parts {
            if let Some(v) = part.strip_prefix("offset:") {
                offset = v.parse().ok();
            } else if let Some(v) = part.strip_prefix("size:") {
                size = v.parse().ok();
            }
        }
        if let (Some(offset), Some(size)) = (offset, size) {
            fields.insert(
                name.to_string(),
                Field {
                    offset,
                    size,
                    data_loc,
                },
            );
        }
    }
    Some(Format { id: id?, fields })
}

/// A task's command name as the kernel keeps it (15 bytes and a NUL).
pub type Comm = [u8; 16];

/// What happened, decoded from a tracepoint's raw record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `sched_switch`: `prev` left the CPU in `prev_state` (0 or the preemption mark: still
    /// runnable) and `next` came on.
    Switch {
        prev: u32,
        prev_state: i64,
        prev_comm: Comm,
        next: u32,
        next_comm: Comm,
    },
    /// `sched_waking`: the waker (the current task, on this CPU) starts waking `pid`.
    Waking { pid: u32 },
    /// `sched_wakeup`: `pid` was put on the run queue of `target_cpu`.
    Wakeup {
        pid: u32,
        target_cpu: u32,
        comm: Comm,
    },
    /// `sched_wakeup_new`: the current task created `pid`, queued on `target_cpu`.
    WakeupNew {
        pid: u32,
        target_cpu: u32,
        comm: Comm,
    },
    /// `sched_migrate_task`: `pid` moved from one CPU to another.
    Migrate { pid: u32 },
    /// `raw_syscalls:sys_exit`: the current task returned from system call `id`.
    SysExit { id: i64 },
}

/// One decoded record: when, on which CPU, in which task's context (`pid` is the thread group,
/// `tid` the thread), and what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub time_ns: u64,
    pub cpu: u32,
    pub pid: u32,
    pub tid: u32,
    pub kind: Kind,
}

/// The tracepoints the explanation reads, each with where its fields are.
#[derive(Debug, Clone, Default)]
pub struct Decoder {
    switch: Option<Switch>,
    waking: Option<(u64, Field)>,
    wakeup: Option<Wake>,
    wakeup_new: Option<Wake>,
    migrate: Option<(u64, Field)>,
    sys_exit: Option<(u64, Field)>,
}

#[derive(Debug, Clone, Copy)]
struct Switch {
    id: u64,
    prev_comm: Field,
    prev_pid: Field,
    prev_state: Field,
    next_comm: Field,
    next_pid: Field,
}

#[derive(Debug, Clone, Copy)]
struct Wake {
    id: u64,
    comm: Field,
    pid: Field,
    target_cpu: Field,
}

/// A tracepoint the decoder knows, by its tracefs path.
pub const SCHED_SWITCH: &str = "sched/sched_switch";
pub const SCHED_WAKING: &str = "sched/sched_waking";
pub const SCHED_WAKEUP: &str = "sched/sched_wakeup";
pub const SCHED_WAKEUP_NEW: &str = "sched/sched_wakeup_new";
pub const SCHED_MIGRATE_TASK: &str = "sched/sched_migrate_task";
pub const SYS_EXIT: &str = "raw_syscalls/sys_exit";
/// Every tracepoint the explanation reads.
pub const TRACEPOINTS: [&str; 6] = [
    SCHED_SWITCH,
    SCHED_WAKING,
    SCHED_WAKEUP,
    SCHED_WAKEUP_NEW,
    SCHED_MIGRATE_TASK,
    SYS_EXIT,
];

impl Decoder {
    /// Learns where `tracepoint`'s fields are; an error names a field its format lacks.
    pub fn learn(&mut self, tracepoint: &str, format: &Format) -> Result<(), String> {
        let field = |name: &str| {
            format
                .fields
                .get(name)
                .copied()
                .ok_or_else(|| format!("the format of {tracepoint} has no field `{name}`"))
        };
        let wake = || -> Result<Wake, String> {
            Ok(Wake {
                id: format.id,
                comm: field("comm")?,
                pid: field("pid")?,
                target_cpu: field("target_cpu")?,
            })
        };
        match tracepoint {
            SCHED_SWITCH => {
                self.switch = Some(Switch {
                    id: format.id,
                    prev_comm: field("prev_comm")?,
                    prev_pid: field("prev_pid")?,
                    prev_state: field("prev_state")?,
                    next_comm: field("next_comm")?,
                    next_pid: field("next_pid")?,
                })
            }
            SCHED_WAKING => self.waking = Some((format.id, field("pid")?)),
            SCHED_WAKEUP => self.wakeup = Some(wake()?),
            SCHED_WAKEUP_NEW => self.wakeup_new = Some(wake()?),
            SCHED_MIGRATE_TASK => self.migrate = Some((format.id, field("pid")?)),
            SYS_EXIT => self.sys_exit = Some((format.id, field("id")?)),
            other => return Err(format!("no decoder for {other}")),
        }
        Ok(())
    }

    /// Decodes one raw record; `None` for a tracepoint it does not know or a record too short.
    pub fn decode(&self, raw: &[u8]) -> Option<Kind> {
        let id = u64::from(u16::from_ne_bytes([*raw.first()?, *raw.get(1)?]));
        if let Some(s) = self.switch.filter(|s| s.id == id) {
            return Some(Kind::Switch {
                prev: int(raw, s.prev_pid)? as u32,
                prev_state: int(raw, s.prev_state)?,
                prev_comm: comm(raw, s.prev_comm)?,
                next: int(raw, s.next_pid)? as u32,
                next_comm: comm(raw, s.next_comm)?,
            });
        }
        if let Some((_, pid)) = self.waking.filter(|w| w.0 == id) {
            return Some(Kind::Waking {
                pid: int(raw, pid)? as u32,
            });
        }
        for (wake, new) in [(self.wakeup, false), (self.wakeup_new, true)] {
            let Some(w) = wake.filter(|w| w.id == id) else {
                continue;
            };
            let (pid, target_cpu, comm) = (
                int(raw, w.pid)? as u32,
                int(raw, w.target_cpu)? as u32,
                comm(raw, w.comm)?,
            );
            return Some(if new {
                Kind::WakeupNew {
                    pid,
                    target_cpu,
                    comm,
                }
            } else {
                Kind::Wakeup {
                    pid,
                    target_cpu,
                    comm,
                }
            });
        }
        if let Some((_, pid)) = self.migrate.filter(|m| m.0 == id) {
            return Some(Kind::Migrate {
                pid: int(raw, pid)? as u32,
            });
        }
        if let Some((_, field)) = self.sys_exit.filter(|s| s.0 == id) {
            return Some(Kind::SysExit {
                id: int(raw, field)?,
            });
        }
        None
    }
}

/// A signed integer field of 1, 2, 4 or 8 bytes.
fn int(raw: &[u8], field: Field) -> Option<i64> {
    let bytes = raw.get(field.offset..field.offset + field.size)?;
    Some(match field.size {
        1 => i64::from(bytes[0] as i8),
        2 => i64::from(i16::from_ne_bytes(bytes.try_into().ok()?)),
        4 => i64::from(i32::from_ne_bytes(bytes.try_into().ok()?)),
        8 => i64::from_ne_bytes(bytes.try_into().ok()?),
        _ => return None,
    })
}

/// A command name, inline (`char comm[16]`) or at a `__data_loc`.
fn comm(raw: &[u8], field: Field) -> Option<Comm> {
    let bytes = if field.data_loc {
        let loc = u32::from_ne_bytes(raw.get(field.offset..field.offset + 4)?.try_into().ok()?);
        let (offset, len) = ((loc & 0xffff) as usize, (loc >> 16) as usize);
        raw.get(offset..offset + len)?
    } else {
        raw.get(field.offset..field.offset + field.size)?
    };
    let mut out = [0u8; 16];
    let n = bytes.len().min(15);
    out[..n].copy_from_slice(&bytes[..n]);
    Some(out)
}

/// A sample as `sys::SampleFields` laid it out: the header, then IP (when asked), pid and tid,
/// time, and the raw record (when asked).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample<'a> {
    /// perf's cpumode bits of the header (1 kernel, 2 user, ...).
    pub cpumode: u16,
    pub ip: Option<u64>,
    pub pid: u32,
    pub tid: u32,
    pub time_ns: u64,
    pub raw: Option<&'a [u8]>,
}

/// What a ring held: its samples, and how many records the kernel said it lost.
#[derive(Debug, Default)]
pub struct RingContents<'a> {
    pub samples: Vec<Sample<'a>>,
    pub lost: u64,
}

/// Walks the records of one ring's bytes; a truncated or malformed record ends the walk.
pub fn walk(bytes: &[u8], ip: bool, raw: bool) -> RingContents<'_> {
    let mut out = RingContents::default();
    let mut at = 0usize;
    while at + 8 <= bytes.len() {
        let kind = u32::from_ne_bytes(bytes[at..at + 4].try_into().unwrap_or_default());
        let misc = u16::from_ne_bytes(bytes[at + 4..at + 6].try_into().unwrap_or_default());
        let size = usize::from(u16::from_ne_bytes(
            bytes[at + 6..at + 8].try_into().unwrap_or_default(),
        ));
        if size < 8 || at + size > bytes.len() {
            break;
        }
        let body = &bytes[at + 8..at + size];
        if kind == crate::sys::RECORD_SAMPLE {
            if let Some(sample) = sample(body, misc, ip, raw) {
                out.samples.push(sample);
            }
        } else if kind == crate::sys::RECORD_LOST {
            out.lost += body
                .get(8..16)
                .and_then(|b| b.try_into().ok())
                .map_or(0, u64::from_ne_bytes);
        }
        at += size;
    }
    out
}

fn sample(body: &[u8], misc: u16, ip: bool, raw: bool) -> Option<Sample<'_>> {
    let u64_at = |at: usize| -> Option<u64> {
        Some(u64::from_ne_bytes(body.get(at..at + 8)?.try_into().ok()?))
    };
    let u32_at = |at: usize| -> Option<u32> {
        Some(u32::from_ne_bytes(body.get(at..at + 4)?.try_into().ok()?))
    };
    let mut at = 0;
    let ip_value = if ip {
        at += 8;
        Some(u64_at(0)?)
    } else {
        None
    };
    let (pid, tid) = (u32_at(at)?, u32_at(at + 4)?);
    let time_ns = u64_at(at + 8)?;
    at += 16;
    let raw_value = if raw {
        let size = u32_at(at)? as usize;
        Some(body.get(at + 4..at + 4 + size)?)
    } else {
        None
    };
    Some(Sample {
        cpumode: misc & 0x7,
        ip: ip_value,
        pid,
        tid,
        time_ns,
        raw: raw_value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Linux 6.18's formats, as tracefs printed them on the machine schedlab was developed on.
    pub(crate) const SWITCH_FORMAT: &str = "name: sched_switch\nID: 372\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\
\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n\
\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n\
\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n\
\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n\
\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n\
print fmt: \"prev_comm=%s prev_pid=%d\", REC->prev_comm, REC->prev_pid\n";

    const MIGRATE_FORMAT: &str = "name: sched_migrate_task\nID: 371\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:__data_loc char[] comm;\toffset:8;\tsize:4;\tsigned:0;\n\
\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n\
\tfield:int orig_cpu;\toffset:20;\tsize:4;\tsigned:1;\n\
\tfield:int dest_cpu;\toffset:24;\tsize:4;\tsigned:1;\n";

    #[test]
    fn reads_offsets_sizes_and_data_locations() {
        let f = parse_format(SWITCH_FORMAT).unwrap();
        assert_eq!(f.id, 372);
        assert_eq!(
            f.fields["prev_state"],
            Field {
                offset: 32,
                size: 8,
                data_loc: false
            }
        );
        assert_eq!(f.fields["prev_comm"].size, 16);
        assert_eq!(f.fields["next_pid"].offset, 56);
        let m = parse_format(MIGRATE_FORMAT).unwrap();
        assert!(m.fields["comm"].data_loc);
        assert_eq!(m.fields["pid"].offset, 12);
        assert_eq!(parse_format("name: x\nformat:\n"), None);
    }

    fn switch_raw(prev: i32, state: i64, next: i32) -> Vec<u8> {
        let mut raw = vec![0u8; 64];
        raw[0..2].copy_from_slice(&372u16.to_ne_bytes());
        raw[8..12].copy_from_slice(b"ping");
        raw[24..28].copy_from_slice(&prev.to_ne_bytes());
        raw[32..40].copy_from_slice(&state.to_ne_bytes());
        raw[40..44].copy_from_slice(b"pong");
        raw[56..60].copy_from_slice(&next.to_ne_bytes());
        raw
    }

    #[test]
    fn decodes_a_switch_and_ignores_unknown_tracepoints() {
        let mut decoder = Decoder::default();
        decoder
            .learn(SCHED_SWITCH, &parse_format(SWITCH_FORMAT).unwrap())
            .unwrap();
        let Some(Kind::Switch {
            prev,
            prev_state,
            prev_comm,
            next,
            next_comm,
        }) = decoder.decode(&switch_raw(7, 0x100, 9))
        else {
            panic!("not a switch");
        };
        assert_eq!((prev, prev_state, next), (7, 0x100, 9));
        assert_eq!(&prev_comm[..5], b"ping\0");
        assert_eq!(&next_comm[..5], b"pong\0");
        let mut other = switch_raw(1, 0, 2);
        other[0..2].copy_from_slice(&999u16.to_ne_bytes());
        assert_eq!(decoder.decode(&other), None);
        assert_eq!(decoder.decode(&switch_raw(1, 0, 2)[..30]), None);
        assert!(decoder
            .learn(SCHED_WAKEUP, &parse_format(SWITCH_FORMAT).unwrap())
            .unwrap_err()
            .contains("no field `comm`"));
    }

    /// A sample record with TID, TIME and RAW, as the kernel lays it out.
    pub(crate) fn record(pid: u32, tid: u32, time: u64, raw: &[u8]) -> Vec<u8> {
        let mut body = Vec::new();
        body.extend_from_slice(&pid.to_ne_bytes());
        body.extend_from_slice(&tid.to_ne_bytes());
        body.extend_from_slice(&time.to_ne_bytes());
        body.extend_from_slice(&(raw.len() as u32).to_ne_bytes());
        body.extend_from_slice(raw);
        while (body.len() + 8) % 8 != 0 {
            body.push(0);
        }
        let mut out = Vec::new();
        out.extend_from_slice(&crate::sys::RECORD_SAMPLE.to_ne_bytes());
        out.extend_from_slice(&0u16.to_ne_bytes());
        out.extend_from_slice(&((body.len() + 8) as u16).to_ne_bytes());
        out.extend_from_slice(&body);
        out
    }

    #[test]
    fn walks_samples_and_counts_lost_records() {
        let mut bytes = record(10, 11, 500, &switch_raw(11, 1, 0));
        bytes.extend(record(10, 12, 600, &switch_raw(12, 0, 11)));
        let mut lost = Vec::new();
        lost.extend_from_slice(&crate::sys::RECORD_LOST.to_ne_bytes());
        lost.extend_from_slice(&0u16.to_ne_bytes());
        lost.extend_from_slice(&24u16.to_ne_bytes());
        lost.extend_from_slice(&1u64.to_ne_bytes());
        lost.extend_from_slice(&42u64.to_ne_bytes());
        bytes.extend(lost);
        // A record cut short by the end of the ring is not read.
        bytes.extend(&record(10, 13, 700, &[1, 2, 3])[..12]);
        let contents = walk(&bytes, false, true);
        assert_eq!(contents.lost, 42);
        assert_eq!(contents.samples.len(), 2);
        let s = contents.samples[1];
        assert_eq!((s.pid, s.tid, s.time_ns), (10, 12, 600));
        assert_eq!(s.raw.unwrap().len(), 64);
    }
}
