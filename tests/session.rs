//! Sessions: namespaces, turns, transactions. Tests are named after the
//! requirement IDs of seed 000 they check.
