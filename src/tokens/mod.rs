//! Token counting with tiktoken's `o200k_base` encoding.
//!
//! The encoding ships inside the tiktoken-rs crate (no network), but
//! loading it costs about 140 ms, so it is loaded on the first count and
//! shared for the rest of the process. Nothing on a start-up path that
//! does not count tokens may call into this module. No I/O.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

fn encoding() -> Option<&'static CoreBPE> {
    static ENCODING: OnceLock<Option<CoreBPE>> = OnceLock::new();
    ENCODING
        .get_or_init(|| tiktoken_rs::o200k_base().ok())
        .as_ref()
}

/// Set on the first count, so tests can check that nothing loads the
/// encoding before then.
static LOADED: OnceLock<()> = OnceLock::new();

/// True once a count has loaded the encoding in this process.
pub fn is_loaded() -> bool {
    LOADED.get().is_some()
}

/// The number of `o200k_base` tokens in `text` (special-token text such as
/// `<|endoftext|>` counts as ordinary text). Should the embedded encoding
/// ever fail to load, a rough estimate of one token per four bytes is
/// returned instead.
///
/// ```
/// assert_eq!(ptc_lisp::tokens::count_tokens("hello world"), 2);
/// ```
pub fn count_tokens(text: &str) -> usize {
    let _ = LOADED.set(());
    match encoding() {
        Some(bpe) => bpe.encode_ordinary(text).len(),
        None => text.len().div_ceil(4),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_plausible() {
        assert_eq!(count_tokens(""), 0);
        let n = count_tokens("(def users (tool/fetch-users \"admin\"))");
        assert!((5..20).contains(&n), "{n}");
        assert!(is_loaded());
    }
}
