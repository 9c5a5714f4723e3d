//! Links GCC's unwinder into the `ptc` binary instead of loading it.
//!
//! On Linux with glibc the standard library unwinds (panics caught at the
//! sandbox's edge, backtraces) through `libgcc_s.so.1`. Loading that
//! library costs every start of `ptc` its mapping, its relocations and its
//! constructor, which detects CPU features with `cpuid` (a trap to the
//! hypervisor on virtual machines). The same unwinder ships with GCC as a
//! static archive, `libgcc_eh.a` (what `gcc -static-libgcc` links); naming
//! it here puts it in the link ahead of the standard library's
//! `-lgcc_s`, which `--as-needed` then drops. Only this binary is linked
//! so: the library crate leaves its embedders' unwinder alone.
//!
//! The module is compiled only for Linux with glibc, and not for a build
//! that is already static (`+crt-static`), which links `libgcc_eh.a`
//! through the standard library.

#[link(name = "gcc_eh", kind = "static", modifiers = "-bundle")]
extern "C" {}

#[cfg(test)]
mod tests {
    use std::backtrace::{Backtrace, BacktraceStatus};

    #[inline(never)]
    fn fail_deep_inside(depth: u32) -> u32 {
        if depth == 0 {
            panic!("unwound through the linked unwinder");
        }
        fail_deep_inside(depth - 1) + 1
    }

    #[test]
    fn panics_unwind_and_backtraces_resolve_without_libgcc_s() {
        let caught = std::panic::catch_unwind(|| fail_deep_inside(20));
        let message = caught.expect_err("the panic unwinds to catch_unwind");
        assert_eq!(
            message.downcast_ref::<&str>(),
            Some(&"unwound through the linked unwinder")
        );

        let trace = Backtrace::force_capture();
        assert_eq!(trace.status(), BacktraceStatus::Captured);
        let text = trace.to_string();
        assert!(
            text.contains("panics_unwind_and_backtraces_resolve_without_libgcc_s"),
            "{text}"
        );

        let maps = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
        assert!(!maps.contains("libgcc_s"), "libgcc_s.so is mapped:\n{maps}");
    }
}
