//! Placeholder, replaced by the nom parser.
use super::Form;
use crate::error::Result;

pub enum ReadStatus {
    Complete,
    Incomplete,
    Invalid(crate::error::Error),
}

pub fn read_program(_src: &str) -> Result<Vec<Form>> {
    unimplemented!()
}

pub fn read_status(_src: &str) -> ReadStatus {
    unimplemented!()
}
