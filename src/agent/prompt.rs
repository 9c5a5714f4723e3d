//! The system prompt of the agent loop, generated rather than kept by
//! hand: the language reference comes from the builtin registry
//! ([`crate::builtins::registry`]) and the special forms from the
//! evaluator ([`crate::eval::special_forms`]), so a new builtin reaches the
//! model without anyone editing a prompt.
//!
//! The prompt is static for a run (MSG-006): the mission, tools, data and
//! history go into the USER message that compression builds. It depends
//! only on whether the run has one turn or several and on the expected
//! return signature. Pure string building; no I/O.

use std::fmt::Write;

use super::signature_check::type_source;
use crate::session::Signature;

/// What the system prompt depends on.
#[derive(Debug, Clone, Copy, Default)]
pub struct PromptOptions<'a> {
    /// One turn only (`max_turns` 1): the program's value is the answer.
    pub single_shot: bool,
    /// The shape `(return v)` must have.
    pub signature: Option<&'a Signature>,
}

const INTRO: &str = "\
You complete a mission by writing programs in PTC-Lisp, a small, safe subset of Clojure. \
Reply with exactly one ```clojure code block holding the program to run; \
put any reasoning in ;; comments inside it.";

const NAMESPACES: &str = "\
## Names
- (tool/name ...) calls a host tool; data/name reads input data (read-only). The mission message lists both.
- Call a tool with positional arguments in signature order, (tool/search \"rust\" 5), or one map of named arguments, (tool/search {:query \"rust\" :limit 5}).
- A bare name means your own definition first, then tool/name or data/name. Write tool/ or data/ explicitly to reach a name you shadowed.";

const MULTI_TURN: &str = "\
## Turns
Each program runs in a sandbox; the next message shows what it did.
- def and defn persist to later turns (your prelude, user/); nothing else does.
- println is the only way to see a value in a later turn. Keep output short.
- (return value) ends the mission successfully; (fail reason) ends it as failed. Both stop the program at once, so never return in the program whose output you still need to see.
- An error stops the program and undoes its definitions: read it, fix the program, try again. Turns are limited.";

const SINGLE_SHOT: &str = "\
## One turn
You have one turn: the value of the program's last expression is the answer (or call (return value)); (fail reason) gives up. def works but nothing is shown back to you.";

const LANGUAGE: &str = "\
## Language
Clojure syntax and core semantics; values are immutable and sequences eager. \
No exceptions, macros, atoms or I/O except through tools. \
Also: #(* % 2), #\"regex\", (:key m), (filter (where :price > 100) coll).";

/// The language section of the prompt: the notes on the language, the
/// special forms and the builtin functions (also the reference in the
/// tool description of `ptc mcp-server`).
pub fn language_reference() -> String {
    let mut out = String::from(LANGUAGE);
    let forms: Vec<&str> = crate::eval::special_forms().collect();
    let _ = write!(out, "\nSpecial forms: {}", forms.join(" "));
    out.push_str("\nFunctions:\n");
    out.push_str(crate::builtins::registry().reference().trim_end());
    out
}

/// The system prompt for a run with these options.
///
/// ```
/// use ptc_lisp::agent::prompt::{system_prompt, PromptOptions};
/// use ptc_lisp::session::Signature;
///
/// let sig = Signature::parse("{total :int}").unwrap();
/// let prompt = system_prompt(PromptOptions { single_shot: false, signature: Some(&sig) });
/// assert!(prompt.contains("(return value) ends the mission successfully"));
/// assert!(prompt.contains(";; Strings: ")); // from the builtin registry
/// assert!(prompt.contains("{total :int}"));
/// ```
pub fn system_prompt(options: PromptOptions<'_>) -> String {
    let mut out = String::with_capacity(8 * 1024);
    out.push_str(INTRO);
    out.push_str("\n\n");
    out.push_str(NAMESPACES);
    out.push_str("\n\n");
    out.push_str(if options.single_shot {
        SINGLE_SHOT
    } else {
        MULTI_TURN
    });
    out.push_str("\n\n");
    out.push_str(&language_reference());
    if let Some(signature) = options.signature {
        let verb = if options.single_shot {
            "The answer"
        } else {
            "The value of (return ...)"
        };
        let _ = write!(
            out,
            "\n\n## Expected result\n{verb} must match {}\n\
             Notation: {{k :t}} a map with at least these keys, [:t] a vector of :t, \
             :t? may be nil or absent, :any anything; :int :float :string :bool :keyword :map.",
            type_source(signature.returns())
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::count_tokens;

    /// The ceiling the prompt must stay under; it is paid on every call.
    const TOKEN_CEILING: usize = 2_500;

    #[test]
    fn the_prompt_is_lean() {
        let sig = Signature::parse("{count :int, items [:string]}").unwrap();
        for options in [
            PromptOptions::default(),
            PromptOptions {
                single_shot: true,
                signature: None,
            },
            PromptOptions {
                single_shot: false,
                signature: Some(&sig),
            },
        ] {
            let prompt = system_prompt(options);
            let tokens = count_tokens(&prompt);
            println!(
                "system prompt (single_shot {}, signature {}): {tokens} tokens, {} chars",
                options.single_shot,
                options.signature.is_some(),
                prompt.len()
            );
            assert!(tokens < TOKEN_CEILING, "{tokens} tokens:\n{prompt}");
        }
    }

    #[test]
    fn the_prompt_covers_the_rules() {
        let prompt = system_prompt(PromptOptions::default());
        for needle in [
            "```clojure",
            "tool/name",
            "data/name",
            "def and defn persist",
            "bare name",
            "explicitly",
            "positional arguments",
            "one map of named arguments",
            "println is the only way",
            "(return value)",
            "(fail reason)",
            "Special forms: ",
            " defn ",
            " where ",
            ";; Collections: ",
        ] {
            assert!(prompt.contains(needle), "missing {needle:?} in\n{prompt}");
        }
        assert!(!prompt.contains("Expected result"));
        let forms = prompt
            .lines()
            .find(|l| l.starts_with("Special forms: "))
            .unwrap();
        assert!(
            !forms.split(' ').any(|f| f == "try" || f == "ns"),
            "{forms}"
        );
        let single = system_prompt(PromptOptions {
            single_shot: true,
            signature: None,
        });
        assert!(single.contains("last expression is the answer"));
        assert!(!single.contains("Turns are limited"));
    }

    #[test]
    fn every_builtin_is_in_the_prompt() {
        let prompt = system_prompt(PromptOptions::default());
        for b in crate::builtins::registry().iter().filter(|b| b.listed()) {
            assert!(
                prompt.split([' ', '\n']).any(|w| w == b.name),
                "`{}` is missing",
                b.name
            );
        }
    }
}
