//! The Python extension module `ptc_lisp._native`: PTC-Lisp sessions with
//! Python tools and data, and the history layer on plain message dicts.
//!
//! Each submodule has one job: `errors` (the exception hierarchy),
//! `convert` (values between PTC-Lisp and Python, and JSON), `tools`
//! (Python callables as tools, run on a worker thread so that the
//! program's time limit holds), `session` (`Session`, `Turn`, `Tool`),
//! `history` (`count_tokens`, `compact`, `load_config`). The Python
//! package `ptc_lisp` (python/ptc_lisp/__init__.py) re-exports all of it.
//!
//! The one `unsafe` call, which raises an exception in a tool's thread
//! after a timeout, is in `tools`; everything else is safe PyO3.
#![deny(unsafe_code)]

mod convert;
mod errors;
mod history;
mod session;
mod tools;

use pyo3::prelude::*;

/// Counts the extension's heap, so that the memory limit of a session
/// holds (`ptc_lisp::heap`). Python's own objects are not counted.
#[global_allocator]
static ALLOC: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

fn heap_in_use() -> usize {
    ALLOC.allocated()
}

#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    ptc_lisp::heap::count_with(heap_in_use);
    errors::register(m)?;
    convert::register(m)?;
    session::register(m)?;
    history::register(m)?;
    tools::register_shutdown(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
