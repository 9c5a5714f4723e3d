//! Build script: links the `ptc` binary with packed relative relocations
//! (DT_RELR) where the linker and the C library support them.
//!
//! A position-independent executable holds one relocation for each pointer
//! in its read-only data (vtables, panic locations, string tables), and the
//! dynamic loader applies every one before `main`. `ptc` has about 15,000:
//! as RELA entries they fill 360 KB that the loader must page in and walk;
//! packed, they fit in 5 KB, and each start is about 0.25 ms shorter
//! (BENCHMARKS.md, thirteenth round).
//!
//! Only glibc 2.36 and later load such binaries, and only GNU ld 2.38, lld 15
//! and later write them. So the flag is used only when a probe program,
//! built by the same compiler with the same flags, links with it (warnings
//! fatal) and runs. Cross builds and other platforms skip the probe and link
//! as before; `PTC_NO_RELR=1` skips it too.

use std::env;
use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

const PACK_RELATIVE_RELOCS: &str = "-Clink-arg=-Wl,-z,pack-relative-relocs";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PTC_NO_RELR");
    if env::var_os("PTC_NO_RELR").is_none() && packed_relocations_work() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether a program linked with packed relative relocations builds and runs
/// here. Any failure (no probe possible, a linker warning, a loader error)
/// answers no.
fn packed_relocations_work() -> bool {
    let var = |name: &str| env::var(name).unwrap_or_default();
    let native = var("TARGET") == var("HOST");
    if !native || var("CARGO_CFG_TARGET_OS") != "linux" || var("CARGO_CFG_TARGET_ENV") != "gnu" {
        return false;
    }
    let (Some(out_dir), Some(rustc)) = (env::var_os("OUT_DIR"), env::var_os("RUSTC")) else {
        return false;
    };
    let out_dir = Path::new(&out_dir);
    let source = out_dir.join("relr_probe.rs");
    let program = out_dir.join("relr_probe");
    if std::fs::write(&source, "fn main() { println!(\"relr\"); }\n").is_err() {
        return false;
    }
    let mut compile = Command::new(rustc);
    compile.args(encoded_rustflags());
    if let Some(linker) = env::var_os("RUSTC_LINKER") {
        let mut flag = OsString::from("-Clinker=");
        flag.push(linker);
        compile.arg(flag);
    }
    compile
        .args(["--edition=2021", "-Copt-level=0", "-Cdebuginfo=0"])
        .args([PACK_RELATIVE_RELOCS, "-Clink-arg=-Wl,--fatal-warnings"])
        .arg("-o")
        .arg(&program)
        .arg(&source);
    let linked = compile.output().is_ok_and(|done| done.status.success());
    linked
        && Command::new(&program)
            .output()
            .is_ok_and(|ran| ran.status.success() && ran.stdout == b"relr\n")
}

/// The flags cargo compiles this package with (`RUSTFLAGS` and the
/// configuration's `rustflags`), so that the probe links as `ptc` will.
fn encoded_rustflags() -> Vec<String> {
    env::var("CARGO_ENCODED_RUSTFLAGS")
        .unwrap_or_default()
        .split('\x1f')
        .filter(|flag| !flag.is_empty())
        .map(str::to_owned)
        .collect()
}
