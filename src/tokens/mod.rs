//! Token counting: tiktoken encodings chosen per model, with a documented
//! approximation for models whose tokenizer we do not ship, calibrated at
//! run time from the usage providers report.
//!
//! The encodings' rank tables are embedded (no network) in a prebuilt
//! format that loads in a few milliseconds (`bpe.rs`); tiktoken-rs, whose
//! own load costs hundreds of milliseconds, is kept as the reference the
//! property tests compare every count with ([`reference_count`]). Each
//! encoding is loaded on its first count (or by [`preload`], in the
//! background, for a command that will count) and shared for the rest of
//! the process. Nothing on a start-up path that does not count tokens
//! may call into this module. No I/O.
//!
//! | models | encoding | factor |
//! |---|---|---|
//! | gpt-4o, gpt-4.1, gpt-4.5, gpt-5, o1, o3, o4 (and their dated or sized variants) | `o200k_base` | exact |
//! | gpt-4, gpt-3.5, text-embedding-* | `cl100k_base` | exact |
//! | Anthropic (claude-*) | `o200k_base` | x 1.20 |
//! | Llama | `o200k_base` | x 1.10 |
//! | Qwen | `o200k_base` | x 1.05 |
//! | anything else | `o200k_base` | x 1.25 |
//!
//! The factors are deliberately on the high side (over-counting only
//! compacts a little early); [`Calibration`] replaces the guess with the
//! running ratio of reported to estimated input tokens once a provider
//! has answered.

use std::collections::HashMap;
use std::sync::OnceLock;

mod bpe;

use bpe::Bpe;

/// A tiktoken encoding we ship.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    O200kBase,
    Cl100kBase,
}

impl Encoding {
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }

    fn bpe(self) -> Option<&'static Bpe> {
        static O200K: OnceLock<Option<Bpe>> = OnceLock::new();
        static CL100K: OnceLock<Option<Bpe>> = OnceLock::new();
        let _ = LOADED.set(());
        match self {
            Encoding::O200kBase => {
                O200K.get_or_init(|| Bpe::new(bpe::O200K_TABLE, tiktoken_rs::O200K_BASE_PAT_STR))
            }
            Encoding::Cl100kBase => {
                CL100K.get_or_init(|| Bpe::new(bpe::CL100K_TABLE, bpe::CL100K_PATTERN))
            }
        }
        .as_ref()
    }

    /// Start loading this encoding on a background thread (see
    /// [`preload`]).
    pub fn preload(self) {
        let _ = std::thread::Builder::new()
            .name("ptc-token-encoding".to_string())
            .spawn(move || {
                self.bpe();
            });
    }

    /// The number of tokens of `text` in this encoding (special-token
    /// text counts as ordinary text). Should the embedded encoding ever
    /// fail to load, one token per four bytes is returned instead.
    pub fn count(self, text: &str) -> usize {
        if text.is_empty() {
            return 0;
        }
        match self.bpe() {
            Some(bpe) => bpe.count(text),
            None => text.len().div_ceil(4),
        }
    }
}

/// The count of `text` by tiktoken-rs itself (loaded on first use, which
/// takes hundreds of milliseconds): the reference that tests compare
/// [`Encoding::count`] with. Not for production paths.
#[doc(hidden)]
pub fn reference_count(encoding: Encoding, text: &str) -> usize {
    reference(encoding).count_ordinary(text)
}

fn reference(encoding: Encoding) -> &'static tiktoken_rs::CoreBPE {
    match encoding {
        Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
        Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
    }
}

/// The token bytes of `rank` in tiktoken-rs's table, for the test that
/// checks the prebuilt tables entry by entry.
#[doc(hidden)]
pub fn reference_token_bytes(encoding: Encoding, rank: u32) -> Option<Vec<u8>> {
    reference(encoding).decode_bytes(&[rank]).ok()
}

/// Our table's token bytes of `rank` (see [`reference_token_bytes`]).
#[doc(hidden)]
pub fn table_token_bytes(encoding: Encoding, rank: u32) -> Option<&'static [u8]> {
    encoding.bpe()?.token(rank)
}

/// The number of ordinary tokens in `encoding` (the size of its table).
#[doc(hidden)]
pub fn table_len(encoding: Encoding) -> usize {
    encoding.bpe().map_or(0, Bpe::len)
}

/// Which tokenizer family a model name belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// An OpenAI model whose encoding we ship: counts are exact.
    OpenAi,
    Anthropic,
    Llama,
    Qwen,
    Unknown,
}

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Family::OpenAi => "openai",
            Family::Anthropic => "anthropic",
            Family::Llama => "llama",
            Family::Qwen => "qwen",
            Family::Unknown => "unknown",
        }
    }
}

/// How tokens are counted for one model: an encoding and, for models
/// whose tokenizer we do not ship, a factor applied to its counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenModel {
    pub encoding: Encoding,
    pub family: Family,
    /// 1.0 for exact counts; otherwise the documented per-family guess.
    pub factor: f64,
}

impl TokenModel {
    /// The counting rule for `model`, which may carry a provider prefix
    /// (`openai:gpt-4o`, `anthropic:claude-sonnet-4`) or a path
    /// (`meta-llama/Llama-3.1-8B`). Matching is case-insensitive.
    pub fn for_model(model: &str) -> TokenModel {
        let lower = model.to_ascii_lowercase();
        let name = lower.rsplit([':', '/']).next().unwrap_or(&lower);
        let approx = |family, factor| TokenModel {
            encoding: Encoding::O200kBase,
            family,
            factor,
        };
        let exact = |encoding| TokenModel {
            encoding,
            family: Family::OpenAi,
            factor: 1.0,
        };
        let o_series = ["o1", "o3", "o4"]
            .iter()
            .any(|p| name == *p || name.starts_with(&format!("{p}-")));
        if name.starts_with("gpt-4o")
            || name.starts_with("chatgpt-4o")
            || name.starts_with("gpt-4.1")
            || name.starts_with("gpt-4.5")
            || name.starts_with("gpt-5")
            || name.starts_with("gpt-oss")
            || o_series
        {
            exact(Encoding::O200kBase)
        } else if name.starts_with("gpt-4")
            || name.starts_with("gpt-3.5")
            || name.starts_with("gpt-35")
            || name.starts_with("text-embedding-")
        {
            exact(Encoding::Cl100kBase)
        } else if lower.contains("claude") || lower.starts_with("anthropic") {
            approx(Family::Anthropic, 1.20)
        } else if lower.contains("llama") {
            approx(Family::Llama, 1.10)
        } else if lower.contains("qwen") {
            approx(Family::Qwen, 1.05)
        } else {
            approx(Family::Unknown, 1.25)
        }
    }

    /// True when counts are exact rather than approximated.
    pub fn is_exact(&self) -> bool {
        self.family == Family::OpenAi
    }

    /// Raw encoding tokens scaled by this model's factor (rounded up).
    pub fn scale(&self, raw: usize) -> usize {
        if self.factor == 1.0 {
            raw
        } else {
            (raw as f64 * self.factor).ceil() as usize
        }
    }

    /// Tokens of `text` for this model.
    pub fn count(&self, text: &str) -> usize {
        self.scale(self.encoding.count(text))
    }
}

/// Running ratios of provider-reported to estimated input tokens, per
/// model. For approximated models the ratio corrects later estimates;
/// for exact ones it is only shown.
#[derive(Debug, Clone, Default)]
pub struct Calibration {
    totals: HashMap<String, (u64, u64)>,
}

/// Ratios further from 1.0 than this are taken as bad reports and ignored.
const RATIO_RANGE: std::ops::RangeInclusive<f64> = 0.25..=4.0;

impl Calibration {
    /// Record that a prompt estimated at `estimated` tokens was reported
    /// as `reported` input tokens by the provider.
    pub fn observe(&mut self, model: &str, estimated: usize, reported: u64) {
        if estimated == 0 || reported == 0 {
            return;
        }
        if !RATIO_RANGE.contains(&(reported as f64 / estimated as f64)) {
            return;
        }
        let entry = self.totals.entry(model.to_string()).or_default();
        entry.0 += estimated as u64;
        entry.1 += reported;
    }

    /// Reported / estimated over every observation for `model`.
    pub fn ratio(&self, model: &str) -> Option<f64> {
        let (estimated, reported) = *self.totals.get(model)?;
        (estimated > 0).then(|| reported as f64 / estimated as f64)
    }

    /// Every model observed, with its ratio and number of tokens seen,
    /// sorted by name.
    pub fn ratios(&self) -> Vec<(String, f64, u64)> {
        let mut out: Vec<_> = self
            .totals
            .iter()
            .filter(|(_, (e, _))| *e > 0)
            .map(|(m, (e, r))| (m.clone(), *r as f64 / *e as f64, *r))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
}

/// Set on the first count, so tests can check that nothing loads an
/// encoding before then.
static LOADED: OnceLock<()> = OnceLock::new();

/// True once a count has loaded an encoding in this process.
pub fn is_loaded() -> bool {
    LOADED.get().is_some()
}

/// Start loading the encoding that counts `model`'s tokens on a
/// background thread, for a command that will count: the load (a few
/// hundred milliseconds) then overlaps the command's other set-up
/// (reading its input, loading data, starting tools), and the first count
/// waits only for what is left of it. Loading twice is impossible (the
/// encodings are loaded once per process); a failed spawn only means the
/// first count loads it.
pub fn preload(model: &str) {
    TokenModel::for_model(model).encoding.preload();
}

/// The number of `o200k_base` tokens in `text`, the encoding of the
/// current OpenAI models and our default.
///
/// ```
/// assert_eq!(ptc_lisp::tokens::count_tokens("hello world"), 2);
/// ```
pub fn count_tokens(text: &str) -> usize {
    Encoding::O200kBase.count(text)
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

    #[test]
    fn models_map_to_encodings() {
        let enc = |m: &str| TokenModel::for_model(m).encoding;
        for m in [
            "gpt-4o",
            "gpt-4o-mini-2024-07-18",
            "openai:gpt-4.1",
            "gpt-5",
            "o1",
            "o3-mini",
            "o4-mini",
        ] {
            assert_eq!(enc(m), Encoding::O200kBase, "{m}");
            assert!(TokenModel::for_model(m).is_exact(), "{m}");
        }
        for m in [
            "gpt-4",
            "gpt-4-turbo",
            "gpt-3.5-turbo",
            "text-embedding-3-small",
        ] {
            assert_eq!(enc(m), Encoding::Cl100kBase, "{m}");
        }
        let fam = |m: &str| TokenModel::for_model(m).family;
        assert_eq!(fam("anthropic:claude-sonnet-4-5"), Family::Anthropic);
        assert_eq!(fam("meta-llama/Llama-3.1-8B"), Family::Llama);
        assert_eq!(fam("qwen2.5-coder"), Family::Qwen);
        assert_eq!(fam("mistral-large"), Family::Unknown);
        assert_eq!(fam("o10-preview"), Family::Unknown);
    }

    #[test]
    fn approximations_scale_the_o200k_count() {
        let text = "fn main() { println!(\"hello\"); }";
        let raw = Encoding::O200kBase.count(text);
        let claude = TokenModel::for_model("claude-3-5-haiku");
        assert_eq!(claude.count(text), (raw as f64 * 1.2).ceil() as usize);
        assert!(Encoding::Cl100kBase.count(text) > 0);
    }

    #[test]
    fn calibration_keeps_a_running_ratio() {
        let mut c = Calibration::default();
        assert_eq!(c.ratio("m"), None);
        c.observe("m", 100, 110);
        c.observe("m", 100, 130);
        assert!((c.ratio("m").unwrap() - 1.2).abs() < 1e-9);
        c.observe("m", 100, 10_000); // implausible: ignored
        assert!((c.ratio("m").unwrap() - 1.2).abs() < 1e-9);
        assert_eq!(c.ratios().len(), 1);
    }
}
