//! What passes between the host and a guest it booted. The host puts a [`GuestJob`] in the
//! initramfs; the guest answers on its second serial port (ttyS1, a file on the host; the first
//! is the kernel's console) with one [`GuestMessage`] per line: `hello` with its fingerprint once
//! booted, each iteration as the runner finishes it, each case failure, and `end` with how the
//! run ended. The host stores each as it arrives, so a guest that dies mid-run keeps what it
//! reported, and only an `end` proves the guest ran to its end (a guest that panics makes QEMU
//! exit 0 all the same).
//!
//! A line is `@schedlab PROTOCOL LENGTH CRC32 JSON`: the length and CRC-32 of the JSON text, so a
//! line cut short by a guest that died while writing it, or damaged on the way, is told from a
//! message. Lines without the prefix (nothing else should write to that port) are skipped and
//! counted.
use serde::{Deserialize, Serialize};

use crate::attachment::Attachment;
use crate::fingerprint::Fingerprint;
use crate::plan::RunPlan;
use crate::record::{IterationRecord, RunStatus};

/// The version of the job and of the messages; a guest binary and a host that disagree on it do
/// not talk.
pub const PROTOCOL: u32 = 1;
/// The serial port the guest reports on, as the guest's devtmpfs names it.
pub const RESULTS_PORT: &str = "/dev/ttyS1";

const PREFIX: &str = "@schedlab";

/// What the host asks the guest to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuestJob {
    pub protocol: u32,
    /// The host's schedlab version: the guest refuses a job of another (stored runs must read
    /// alike), saying so on the results port.
    pub schedlab_version: String,
    /// The guest's host name, which its fingerprint (and so `schedlab hosts`) carries.
    pub hostname: String,
    pub plan: RunPlan,
}

/// What the guest itself sees of the hypervisor, beside its fingerprint.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuestFacts {
    /// The hypervisor's CPUID signature (leaf 0x40000000): `KVMKVMKVM`, `TCGTCGTCGTCG`, ...;
    /// `None` when the CPU shows none.
    pub hypervisor_signature: Option<String>,
    /// KVM's paravirtual steal time (KVM_FEATURE_STEAL_TIME of leaf 0x40000001), on which x86's
    /// `vcpu_is_preempted()` rests; `None` under a hypervisor that is not KVM.
    pub kvm_steal_time: Option<bool>,
}

/// One message of the guest, one line on the results port.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum GuestMessage {
    /// The guest booted, read its job and is about to run it.
    Hello {
        fingerprint: Box<Fingerprint>,
        facts: GuestFacts,
        /// The plan's case names as the guest makes them: a parameter that defaults to the
        /// machine's (cpupri's NUMA nodes) names the guest's value, not the host's.
        case_names: Vec<String>,
    },
    /// The runner finished an iteration of the plan's case `case_index`.
    Iteration {
        case_index: usize,
        /// The record without its attachments, whose data its JSON leaves out.
        iteration: Box<IterationRecord>,
        /// The iteration's attachments with their data.
        attachments: Vec<WireAttachment>,
    },
    CaseFailure {
        case_index: usize,
        message: String,
    },
    /// The run ended; the guest powers off after this.
    End {
        status: RunStatus,
        error: Option<String>,
    },
    /// The guest could not run the job at all (a bad job, a binary of another version).
    Refused {
        reason: String,
    },
}

/// An attachment on the wire: the data in hex.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireAttachment {
    pub name: String,
    pub encoding: String,
    pub hex: String,
}

impl WireAttachment {
    pub fn of(attachment: &Attachment) -> Self {
        WireAttachment {
            name: attachment.name.clone(),
            encoding: attachment.encoding.clone(),
            hex: attachment.data.iter().map(|b| format!("{b:02x}")).collect(),
        }
    }

    /// The iteration record an `Iteration` message carried, with its attachments' data back.
    pub fn restore(
        mut iteration: IterationRecord,
        attachments: &[WireAttachment],
    ) -> Result<IterationRecord, String> {
        iteration.attachments = attachments
            .iter()
            .map(WireAttachment::decode)
            .collect::<Result<_, _>>()?;
        Ok(iteration)
    }

    pub fn decode(&self) -> Result<Attachment, String> {
        let digits = self.hex.as_bytes();
        if !digits.len().is_multiple_of(2) {
            return Err(format!("attachment {}: odd hex length", self.name));
        }
        let data = digits
            .chunks(2)
            .map(|pair| {
                std::str::from_utf8(pair)
                    .ok()
                    .and_then(|p| u8::from_str_radix(p, 16).ok())
                    .ok_or_else(|| format!("attachment {}: not hex", self.name))
            })
            .collect::<Result<Vec<u8>, String>>()?;
        Ok(Attachment {
            name: self.name.clone(),
            encoding: self.encoding.clone(),
            data,
        })
    }
}

impl GuestMessage {
    /// An iteration as the runner's sink gets it, with its attachments' data on the wire.
    pub fn iteration(case_index: usize, iteration: &IterationRecord) -> Self {
        GuestMessage::Iteration {
            case_index,
            attachments: iteration
                .attachments
                .iter()
                .map(WireAttachment::of)
                .collect(),
            iteration: Box::new(IterationRecord {
                attachments: Vec::new(),
                ..iteration.clone()
            }),
        }
    }

    /// The line that carries the message, newline included.
    pub fn frame(&self) -> String {
        // Serialising these types cannot fail: no map has keys that are not strings.
        let json = serde_json::to_string(self).unwrap_or_default();
        format!(
            "{PREFIX} {PROTOCOL} {} {:08x} {json}\n",
            json.len(),
            crc32fast::hash(json.as_bytes())
        )
    }
}

/// A line with the prefix that is not a message of this protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DamagedFrame(pub String);

/// Reads messages out of the bytes of the results port as they arrive, in any pieces.
#[derive(Debug, Default)]
pub struct FrameReader {
    pending: Vec<u8>,
    /// Lines that were not frames (nothing but the guest should write there).
    pub skipped_lines: u64,
}

impl FrameReader {
    pub fn push(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
    }

    /// The next whole line's message, `None` until a whole line has arrived.
    pub fn next_message(&mut self) -> Option<Result<GuestMessage, DamagedFrame>> {
        loop {
            let end = self.pending.iter().position(|&b| b == b'\n')?;
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            // A line break before the prefix (a serial line that started mid-garbage) still
            // leaves the frame whole after it.
            let Some(at) = line.find(PREFIX) else {
                if !line.trim().is_empty() {
                    self.skipped_lines += 1;
                }
                continue;
            };
            return Some(parse(&line[at..]));
        }
    }

    /// Bytes after the last line break: a frame the guest had not finished writing.
    pub fn unfinished(&self) -> usize {
        self.pending.len()
    }
}

fn parse(line: &str) -> Result<GuestMessage, DamagedFrame> {
    let damaged = |why: &str| {
        let shown: String = line.chars().take(80).collect();
        DamagedFrame(format!("{why}: {shown:?}"))
    };
    let mut fields = line.splitn(5, ' ');
    let (_prefix, protocol, length, crc, json) = (
        fields.next(),
        fields.next().ok_or_else(|| damaged("no protocol"))?,
        fields.next().ok_or_else(|| damaged("no length"))?,
        fields.next().ok_or_else(|| damaged("no checksum"))?,
        fields.next().ok_or_else(|| damaged("no message"))?,
    );
    if protocol != PROTOCOL.to_string() {
        return Err(damaged(&format!(
            "protocol {protocol}, not {PROTOCOL} (a guest binary of another schedlab)"
        )));
    }
    if length.parse::<usize>().ok() != Some(json.len()) {
        return Err(damaged(&format!(
            "{} bytes where the frame announced {length}",
            json.len()
        )));
    }
    if u32::from_str_radix(crc, 16).ok() != Some(crc32fast::hash(json.as_bytes())) {
        return Err(damaged("checksum mismatch"));
    }
    serde_json::from_str(json).map_err(|e| damaged(&format!("unreadable message ({e})")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::{Better, Measurement, MetricShape, Role};

    fn iteration() -> IterationRecord {
        IterationRecord {
            index: 2,
            warmup: false,
            started_at_ns: 1_700_000_000_000_000_000,
            measurements: vec![Measurement {
                name: "time_sec".into(),
                unit: "s".into(),
                better: Better::Lower,
                role: Role::Primary,
                shape: MetricShape::default(),
                distribution: None,
                value: 1.25,
            }],
            attachments: vec![Attachment {
                name: "wakeup_latency".into(),
                encoding: "hdrhistogram-v2-deflate".into(),
                data: vec![0, 1, 0x7f, 0x80, 0xff],
            }],
            quiet: None,
        }
    }

    fn read_all(reader: &mut FrameReader) -> Vec<Result<GuestMessage, DamagedFrame>> {
        std::iter::from_fn(|| reader.next_message()).collect()
    }

    #[test]
    fn messages_come_back_whole_in_any_pieces() {
        let messages = [
            GuestMessage::Hello {
                fingerprint: Box::new(Fingerprint {
                    kernel_release: "6.12.117+deb12-cloud-amd64".into(),
                    ..Fingerprint::default()
                }),
                facts: GuestFacts {
                    hypervisor_signature: Some("TCGTCGTCGTCG".into()),
                    kvm_steal_time: None,
                },
                case_names: vec!["pipe:process loops=2000".into()],
            },
            GuestMessage::iteration(1, &iteration()),
            GuestMessage::CaseFailure {
                case_index: 0,
                message: "deadline: worker 3 stuck".into(),
            },
            GuestMessage::End {
                status: RunStatus::Complete,
                error: None,
            },
        ];
        let stream: String = messages.iter().map(GuestMessage::frame).collect();
        for piece in [1, 7, 4096] {
            let mut reader = FrameReader::default();
            let mut got = Vec::new();
            for chunk in stream.as_bytes().chunks(piece) {
                reader.push(chunk);
                got.extend(read_all(&mut reader));
            }
            let got: Vec<GuestMessage> = got.into_iter().map(Result::unwrap).collect();
            assert_eq!(got, messages, "pieces of {piece} bytes");
            assert_eq!(reader.unfinished(), 0);
        }
    }

    #[test]
    fn attachments_keep_their_data() {
        let frame = GuestMessage::iteration(0, &iteration()).frame();
        let mut reader = FrameReader::default();
        reader.push(frame.as_bytes());
        let Some(Ok(GuestMessage::Iteration {
            iteration: record,
            attachments,
            ..
        })) = reader.next_message()
        else {
            unreachable!()
        };
        assert_eq!(attachments[0].hex, "00017f80ff");
        assert_eq!(
            WireAttachment::restore(*record, &attachments).unwrap(),
            iteration()
        );
        let odd = WireAttachment {
            hex: "abc".into(),
            ..attachments[0].clone()
        };
        assert!(odd.decode().is_err());
        let bad = WireAttachment {
            hex: "zz".into(),
            ..attachments[0].clone()
        };
        assert!(bad.decode().is_err());
    }

    #[test]
    fn other_lines_are_skipped_and_damaged_frames_named() {
        let end = GuestMessage::End {
            status: RunStatus::Failed,
            error: Some("no".into()),
        };
        let frame = end.frame();
        let mut reader = FrameReader::default();
        reader.push(b"[    1.234] random noise\r\n\r\n");
        reader.push(frame.as_bytes());
        assert_eq!(read_all(&mut reader), [Ok(end.clone())]);
        assert_eq!(reader.skipped_lines, 1);

        let flipped = frame.replacen("\"failed\"", "\"faileD\"", 1);
        reader.push(flipped.as_bytes());
        let got = read_all(&mut reader);
        assert!(
            got[0].as_ref().unwrap_err().0.contains("checksum"),
            "{got:?}"
        );

        let cut = &frame[..frame.len() - 10];
        reader.push(cut.as_bytes());
        reader.push(b"\n");
        let got = read_all(&mut reader);
        assert!(
            got[0].as_ref().unwrap_err().0.contains("announced"),
            "{got:?}"
        );

        reader.push(frame.replacen("@schedlab 1 ", "@schedlab 9 ", 1).as_bytes());
        let got = read_all(&mut reader);
        assert!(
            got[0].as_ref().unwrap_err().0.contains("protocol 9"),
            "{got:?}"
        );

        reader.push(&frame.as_bytes()[..20]);
        assert!(reader.next_message().is_none());
        assert_eq!(reader.unfinished(), 20);
    }

    #[test]
    fn a_job_reads_back() {
        let plan = RunPlan::new(
            None,
            Some("x-a".into()),
            1,
            0,
            vec![crate::workload::WorkloadSpec::Fake(
                crate::workload::fake::FakeParams::default(),
            )],
        )
        .unwrap();
        let job = GuestJob {
            protocol: PROTOCOL,
            schedlab_version: "0.1.0".into(),
            hostname: "box-vm-tcg".into(),
            plan,
        };
        let json = serde_json::to_string(&job).unwrap();
        assert_eq!(serde_json::from_str::<GuestJob>(&json).unwrap(), job);
    }
}
