//! The built-in redaction rules: a name, a regex (its first capture
//! group, when present, is kept; the rest of a match becomes
//! `<REDACTED>`), whether the rule also cleans what the digest copies
//! (all but e-mail addresses, see `without_secret_values`) and an
//! optional check of a match (card numbers: Luhn). Documented, rule by rule, in
//! SECURITY.md and the README.

/// A check of a match: `Some(len)` accepts the first `len` bytes of it
/// (all of it, or a shorter prefix), `None` rejects it.
pub(super) type Check = fn(&str) -> Option<usize>;

pub(super) struct Rule {
    pub name: &'static str,
    pub source: &'static str,
    /// Also applied to what the digest copies (every rule but e-mail
    /// addresses, which may be facts a later turn needs).
    pub in_digest: bool,
    pub check: Option<Check>,
}

/// A secret found by its shape (`sk-...`, a PEM block).
const fn shape(name: &'static str, source: &'static str) -> Rule {
    Rule {
        name,
        source,
        in_digest: true,
        check: None,
    }
}

/// A secret found by its name (`password: x`).
const fn named(name: &'static str, source: &'static str) -> Rule {
    shape(name, source)
}

/// The names of secrets in text (`api_key=`, `"token": `), matched at
/// the end of a longer name (`db_password`, `AWS_SESSION_TOKEN`); `pwd`
/// and `pass` have a rule of their own.
pub(super) const SECRET_NAMES: &str = r"api[_\-]?key|apikey|access[_\-]?key|secret[_\-]?key|private[_\-]?key|session[_\-]?key|secret|token|password|passwd|passphrase|credentials?|authorization|auth|cookies?|session";

/// A secret's name as written before its value (`db_password`,
/// `"api_key"`, `pwd`, `db_pass`), with its closing quote.
pub(super) const SECRET_NAME: &str =
    r#"(?i:(?:[\w.\-]*(?:{names}|pwd)|(?:[\w.\-]*[_.\-])?pass)(?:\\?["'])?)"#;

/// Where a secret may start: after no word character, or after a JSON
/// escape (`\n`, `\t`, `\r`: text inside a JSON string, such as tool
/// call arguments, where `\b` would see the `n` as part of a word).
pub(super) const BOUNDARY: &str = r"(?:(?<!\w)|(?<=\\[nrt]))";

/// Where a value given by name ends early: another `name=` / `name:`
/// pair after a separator (`token=x&page=2`, `Pwd=x;Encrypt=yes`,
/// `password: x user: y`).
const NEXT_PAIR: &str = r#"(?:\s*[(\[{<]*\\?["']?[\w.\-]+\\?["']?\s*[:=])"#;

/// One character of an unquoted value: no space, quote or backslash
/// (a quote between letters and an escape other than `\n`, `\r`, `\t`,
/// `\"` belong to it), and `&`, `;`, `,` unless a next pair follows.
const VALUE_CHAR: &str = r#"(?:[^\s"'\\&;,]|[&;,](?!{pair})|(?<=\w)["'](?=\w)|\\[^nrt"\s])"#;

/// A placeholder, not a value: `<your-api-key>`, `<REDACTED>`,
/// `$DB_PASSWORD`, `${GITHUB_TOKEN}`.
const PLACEHOLDER: &str = r"(?:<[A-Za-z][\w\- ]*>|\$\{?[A-Z_][A-Z0-9_]*\}?)";

/// The built-in rules, in the order they run. In the sources, `{b}` is
/// [`BOUNDARY`], `{names}` [`SECRET_NAMES`], `{name}` [`SECRET_NAME`],
/// `{v}` a value character, `{pair}` a next pair and `{ph}` a
/// [`PLACEHOLDER`].
pub(super) const RULES: &[Rule] = &[
    // A whole block, or, cut short, its header lines and base64 lines
    // (each up to a line's end, perhaps after closing punctuation:
    // `passphrase=x` after the block is no base64 line).
    shape(
        "private-key-block",
        r#"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|(?:(?:\s|\\[nr])+(?:(?:[A-Za-z0-9+/]{16,}={0,2}|[A-Za-z0-9+/]+={1,2})(?=[.,;:)\]}"']*(?:\s|\\[nrt"]|$))|[A-Za-z][A-Za-z\-]*: [^\n\\]*))*)"#,
    ),
    shape("anthropic-key", r"{b}sk-ant-[A-Za-z0-9_\-]{20,}"),
    // Random keys have digits or capitals; `sk-learn-compatible-...`
    // has neither.
    shape(
        "openai-key",
        r"{b}sk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_\-]*[0-9A-Z])[A-Za-z0-9_\-]{20,}",
    ),
    shape(
        "stripe-key",
        r"{b}(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}|{b}whsec_[A-Za-z0-9]{20,}",
    ),
    shape(
        "google-key",
        r"{b}AIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])|{b}GOCSPX-[0-9A-Za-z_\-]{20,}|{b}ya29\.[0-9A-Za-z_\-]{20,}",
    ),
    shape(
        "aws-access-key-id",
        r"{b}(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA)[0-9A-Z]{16}\b",
    ),
    shape(
        "github-token",
        r"{b}(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
    ),
    shape(
        "gitlab-token",
        r"{b}(?:glpat|gldt|glrt|glptt|glsoat)-[A-Za-z0-9_\-]{20,}",
    ),
    shape(
        "slack-token",
        r"{b}xox[abposre]-[A-Za-z0-9\-]{10,}|{b}xapp-[0-9]-[A-Za-z0-9\-]{10,}",
    ),
    shape(
        "slack-webhook",
        r"((?i:https?://)hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9_/\-]{8,}",
    ),
    shape(
        "package-registry-token",
        r"{b}npm_[A-Za-z0-9]{36}\b|{b}pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{20,}",
    ),
    shape(
        "saas-token",
        r"{b}SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}|{b}hf_[A-Za-z0-9]{30,}\b|{b}shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b|{b}dop_v1_[a-f0-9]{64}\b",
    ),
    shape(
        "jwt",
        r"{b}eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*",
    ),
    shape(
        "url-password",
        r"({b}[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/?#@]+:)(?!<REDACTED>)[^\s/?#]+(?=@)",
    ),
    // Not a URL's user (`https://ann@host`), nor scp's `git@host:path`.
    Rule {
        name: "email",
        source: r"(?:(?<![\w.%+\-/])|(?<=\\[nrt]))[A-Za-z0-9][A-Za-z0-9._%+\-]{0,63}@(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.){1,8}[A-Za-z]{2,24}(?![\w\-]|\.[A-Za-z0-9]|:[\w~/])",
        in_digest: false,
        check: None,
    },
    Rule {
        name: "card-number",
        source: r"(?:(?<![\w\-.])|(?<=\\[nrt]))[2-6][0-9]{12,18}(?![\w\-]|\.[0-9])|(?:(?<![\w\-.])|(?<=\\[nrt]))[2-6][0-9]{3}(?:[ \-][0-9]{2,6}){2,5}(?![\w\-]|\.[0-9])",
        in_digest: true,
        check: Some(card_number),
    },
    // `{:password "hunter2"}` (Clojure, PTC-Lisp).
    named(
        "keyword-string",
        r#"((?i)(?:(?<![\w\-])|(?<=\\[nrt])):[\w.\-]*(?:{names})\s+")(?!<REDACTED>")(?:[^"\\\n]|\\.){1,}(?=")"#,
    ),
    // A cookie header's whole value, to the end of its line.
    named(
        "cookie-header",
        r#"((?i)\b(?:set-)?cookie\\?["']?\s*:\s*\\?["']?)(?!<REDACTED>)(?:[^\s\\"]|\\[^nr"\s])(?:[^\r\n\\"]|\\[^nr"])*"#,
    ),
    // `name=value`, `name: value`, `"name": "value"` (also with escaped
    // quotes, inside a JSON string): a quoted value up to its closing
    // quote; an unquoted one after `name=` up to a space, after
    // `name: ` or `name = ` up to the end of its line; either stops
    // early at a next pair (`&page=2`). Never another name (`token:
    // password: x` redacts `x`), nor a scheme's word, bracketed or not,
    // whose token the bearer patterns take.
    named(
        "assignment",
        r#"((?i)\b[\w.\-]*(?:{names})(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?)(?:(?<=[^\\]")(?!{ph}")(?!{name}\s*[:=])(?:[^"\\\n]|\\[^"\n])+(?=")|(?<=\\")(?!{ph}\\")(?!{name}\s*[:=])(?:[^"\\\n]|\\[^"\n])+(?=\\")|(?<=[^\\]')(?!{ph}')(?!{name}\s*[:=])[^'\n]+(?=')|(?<=[^\s"'\\]=)(?!\\?["'])(?!<REDACTED>)(?!{ph}(?:[\s"',;&\\]|$))(?![(\[{<]*(?:{name}\s*[:=]|(?i:bearer|basic|digest)\s)){v}{3,}|(?<![^\s"'\\]=)(?!\\?["'])(?!<REDACTED>)(?!{ph}(?:[\s"',;&\\]|$))(?![(\[{<]*(?:{name}\s*[:=]|(?i:bearer|basic|digest)\s))(?=(?:{v}|[ \t]){3})(?:{v})+(?:[ \t]+(?!{pair})(?:{v})+)*)"#,
    ),
    // `pwd=...` (not a directory: `PWD=/home/me`) and `pass=...` (a
    // whole word or after a separator: not `bypass`).
    named(
        "pwd-assignment",
        r#"((?i)\b(?:[\w.\-]*pwd|(?:[\w.\-]*[_.\-])?pass)(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?)(?:(?<=[^\\]")(?!{ph}")(?!{name}\s*[:=])(?![/~])(?:[^"\\\n]|\\[^"\n])+(?=")|(?!\\?["'])(?!<REDACTED>)(?!{ph}(?:[\s"',;&\\]|$))(?!{name}\s*[:=])(?![/~.])(?:{v}){3,})"#,
    ),
    // After the assignments (`Bearer api_key = x` loses `x` first).
    // A token has a digit, an inner punctuation mark or a capital
    // past its first letter (`Bearer authentication.` is prose), and
    // ends at a delimiter and is no name (`Bearer name=value` and
    // `Bearer name: value` are assignments).
    shape(
        "bearer-token",
        r#"({b}(?i:bearer)\s+)(?=[A-Za-z0-9\-._~+/]*[0-9]|[A-Za-z0-9\-._~+/]*[\-._~+/][A-Za-z0-9]|[A-Za-z0-9\-._~+/]+[A-Z])[A-Za-z0-9\-._~+/]{12,}=*(?![^\s"',;&)\]}>\\])(?![:=])"#,
    ),
    shape(
        "authorization-header",
        r#"({b}(?i:authorization)(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?(?i:basic|token|digest)\s+)(?!<REDACTED>)[A-Za-z0-9+/=._~\-]{8,}(?![^\s"',;&)\]}>\\])(?![:=])"#,
    ),
];

/// A rule's source with its placeholders filled in.
pub(super) fn expand(source: &str) -> String {
    source
        .replace("{name}", SECRET_NAME)
        .replace("{names}", SECRET_NAMES)
        .replace("{b}", BOUNDARY)
        .replace("{v}", VALUE_CHAR)
        .replace("{pair}", NEXT_PAIR)
        .replace("{ph}", PLACEHOLDER)
}

/// A card number: the longest run of its digit groups (all of them,
/// or the first ones: `4111 1111 1111 1111 12` is a card and `12`) of
/// 13 to 19 digits that passes the Luhn check.
fn card_number(found: &str) -> Option<usize> {
    // The ends of the groups, longest first.
    let mut ends: Vec<usize> = found
        .char_indices()
        .filter(|(_, c)| *c == ' ' || *c == '-')
        .map(|(i, _)| i)
        .collect();
    ends.push(found.len());
    ends.into_iter().rev().find(|&end| {
        let digits: Vec<u32> = found[..end]
            .chars()
            .filter_map(|c| c.to_digit(10))
            .collect();
        (13..=19).contains(&digits.len()) && luhn(&digits)
    })
}

/// The Luhn checksum of `digits` is valid.
pub(super) fn luhn(digits: &[u32]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            if i % 2 == 1 {
                let x = d * 2;
                if x > 9 {
                    x - 9
                } else {
                    x
                }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn luhn_and_card_groups() {
        let digits = |s: &str| s.chars().filter_map(|c| c.to_digit(10)).collect::<Vec<_>>();
        assert!(luhn(&digits("4111111111111111")));
        assert!(!luhn(&digits("4111111111111112")));
        assert_eq!(card_number("4111 1111 1111 1111"), Some(19));
        assert_eq!(card_number("4111 1111 1111 1111 12"), Some(19));
        assert_eq!(card_number("4111-1111-1111-1112"), None);
        assert_eq!(card_number("378282246310005"), Some(15));
    }
}
