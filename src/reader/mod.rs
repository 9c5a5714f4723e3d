//! The reader: program text to spanned forms. It never evaluates.
//!
//! `read_program` parses a whole program (any number of top-level forms),
//! `read_one` exactly one form;
//! `read_status` tells the REPL whether input is complete, incomplete
//! (unbalanced, so more lines should follow) or invalid.

mod form;
mod name;
mod parser;
mod size;

pub use form::{Form, FormKind};
pub use name::Name;
pub use parser::{read_one, read_program, read_status, ReadStatus, MAX_DEPTH};
pub use size::check_literal_sizes;

#[cfg(test)]
mod tests;
