//! The initramfs a guest boots: a newc cpio archive (the format the kernel unpacks into its
//! rootfs, Documentation/driver-api/early-userspace/buffer-format.rst), uncompressed so that an
//! emulated CPU spends no time inflating it, written with the `cpio` crate. It holds schedlab's
//! static binary as `/init`, the job it is to run, the mount points `/init` needs and
//! `/dev/console`, which the kernel opens as init's standard streams before any devtmpfs exists.
//! Nothing else: no shell, no C library, no distribution.
use std::io::{self, Write};

use cpio::newc::Builder;

/// Where the job goes in the guest's root file system (see [`super::protocol::GuestJob`]).
pub const JOB_PATH: &str = "schedlab/job.json";

const DIRECTORY: u32 = 0o040_755;
const EXECUTABLE: u32 = 0o100_755;
const READABLE: u32 = 0o100_644;
/// A character device readable and writable by root: /dev/console is 5:1.
const CONSOLE: u32 = 0o020_600;

/// Writes the archive: the directories, `/dev/console`, `init` (the static binary) and the job.
pub fn write_initramfs(out: &mut dyn Write, init: &[u8], job: &[u8]) -> io::Result<()> {
    let mut ino = 0u32;
    let mut entry = |name: &str, mode: u32| {
        ino += 1;
        Builder::new(name).ino(ino).mode(mode).uid(0).gid(0)
    };
    let mut out = out;
    for dir in ["dev", "proc", "sys", "tmp", "run", "schedlab"] {
        let nlink = 2;
        out = finish(entry(dir, DIRECTORY).nlink(nlink).write(out, 0), &[])?;
    }
    out = finish(
        entry("dev/console", CONSOLE)
            .rdev_major(5)
            .rdev_minor(1)
            .write(out, 0),
        &[],
    )?;
    out = finish(entry("init", EXECUTABLE).write(out, size(init)?), init)?;
    out = finish(entry(JOB_PATH, READABLE).write(out, size(job)?), job)?;
    cpio::newc::trailer(out)?;
    Ok(())
}

/// A file's size as the newc header holds it (eight hex digits).
fn size(data: &[u8]) -> io::Result<u32> {
    u32::try_from(data.len()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} bytes do not fit a cpio archive's 4 GiB file size",
                data.len()
            ),
        )
    })
}

/// Writes an entry's data and ends it. The crate pads an entry only when all of its announced
/// size was written, and says nothing otherwise; `write_all` of exactly that size makes sure.
fn finish<W: Write>(mut writer: cpio::newc::Writer<W>, data: &[u8]) -> io::Result<W> {
    writer.write_all(data)?;
    writer.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cpio::newc::Reader;

    /// An entry read back: name, mode, rdev (major, minor) and contents.
    type Entry = (String, u32, (u32, u32), Vec<u8>);

    /// Every entry of an archive, read back with the crate's reader, which checks the magic, the
    /// alignment and the trailer.
    fn entries(mut archive: &[u8]) -> Vec<Entry> {
        let mut out = Vec::new();
        loop {
            let mut reader = Reader::new(archive).unwrap();
            if reader.entry().is_trailer() {
                let rest = reader.finish().unwrap();
                assert!(rest.is_empty(), "bytes after the trailer");
                return out;
            }
            let e = reader.entry();
            let (name, mode, rdev) = (
                e.name().to_string(),
                e.mode(),
                (e.rdev_major(), e.rdev_minor()),
            );
            let mut data = Vec::new();
            io::Read::read_to_end(&mut reader, &mut data).unwrap();
            out.push((name, mode, rdev, data));
            archive = reader.finish().unwrap();
        }
    }

    #[test]
    fn holds_init_the_job_the_mount_points_and_the_console() {
        let init = b"\x7fELF not really".repeat(3);
        let job = br#"{"protocol":1}"#;
        let mut archive = Vec::new();
        write_initramfs(&mut archive, &init, job).unwrap();
        assert_eq!(archive.len() % 4, 0, "newc pads to four bytes");
        let entries = entries(&archive);
        let names: Vec<&str> = entries.iter().map(|e| e.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "dev",
                "proc",
                "sys",
                "tmp",
                "run",
                "schedlab",
                "dev/console",
                "init",
                JOB_PATH
            ]
        );
        let by_name = |name: &str| entries.iter().find(|e| e.0 == name).unwrap();
        assert_eq!(by_name("init").1, 0o100_755);
        assert_eq!(by_name("init").3, init);
        assert_eq!(by_name(JOB_PATH).3, job);
        assert_eq!(by_name("dev/console").1, 0o020_600);
        assert_eq!(by_name("dev/console").2, (5, 1));
        assert_eq!(by_name("proc").1, 0o040_755);
    }

    /// Sizes that are not multiples of four are where a missing pad would shift every later
    /// header; the reader finds each entry whole.
    #[test]
    fn pads_every_size() {
        for len in 0..9 {
            let init = vec![0xAB; len];
            let job = vec![b'x'; 9 - len];
            let mut archive = Vec::new();
            write_initramfs(&mut archive, &init, &job).unwrap();
            let entries = entries(&archive);
            assert_eq!(entries[7].3, init, "init of {len} bytes");
            assert_eq!(entries[8].3, job);
        }
    }
}
