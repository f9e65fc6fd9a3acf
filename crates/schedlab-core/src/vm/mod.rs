//! A kernel under test booted in a QEMU guest, the parts that need no OS: what a kernel image
//! and a binary say about themselves ([`image`]), the initramfs schedlab builds around its own
//! static binary ([`initramfs`]), the QEMU command line ([`qemu`]) and the framed messages the
//! guest sends back over its second serial port ([`protocol`]). The host side that starts QEMU,
//! and the guest's `/init`, are the binary crate's (`crates/schedlab/src/vm/`); the calls the
//! guest makes of its kernel (mounts, power-off, the serial line) are in `sys`.
pub mod image;
pub mod initramfs;
pub mod protocol;
pub mod qemu;
