//! Reader tests: lexical rules, spans, errors, REPL status and robustness.

use super::*;
use crate::error::{Error, ErrorKind};

/// A compact rendering of a form for assertions: floats always show a
/// decimal point and strings are debug-quoted, so `1` and `1.0` and `"1"`
/// stay distinct.
fn show(f: &Form) -> String {
    fn seq(items: &[Form]) -> String {
        items.iter().map(show).collect::<Vec<_>>().join(" ")
    }
    match &f.kind {
        FormKind::Nil => "nil".into(),
        FormKind::Bool(b) => b.to_string(),
        FormKind::Int(n) => n.to_string(),
        FormKind::Float(x) => format!("{x:?}"),
        FormKind::Str(s) => format!("{s:?}"),
        FormKind::Keyword(k) => format!(":{k}"),
        FormKind::Symbol(s) => s.to_string(),
        FormKind::List(v) => format!("({})", seq(v)),
        FormKind::Vector(v) => format!("[{}]", seq(v)),
        FormKind::Map(v) => format!("{{{}}}", seq(v)),
        FormKind::Set(v) => format!("#{{{}}}", seq(v)),
        FormKind::AnonFn(v) => format!("#({})", seq(v)),
        FormKind::Regex(r) => format!("#\"{r}\""),
        FormKind::Quote(q) => format!("'{}", show(q)),
        FormKind::Var(v) => format!("#'{v}"),
    }
}

fn read(src: &str) -> String {
    match read_program(src) {
        Ok(forms) => forms.iter().map(show).collect::<Vec<_>>().join(" "),
        Err(e) => panic!("reading {src:?} failed: {e}"),
    }
}

fn kind(src: &str) -> FormKind {
    match read_one(src) {
        Ok(f) => f.kind,
        Err(e) => panic!("reading {src:?} failed: {e}"),
    }
}

fn err(src: &str) -> Error {
    match read_program(src) {
        Ok(forms) => panic!("reading {src:?} should fail, got {forms:?}"),
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::Parse, "{src:?}");
            assert!(e.span().is_some(), "error without span for {src:?}");
            e
        }
    }
}

fn msg(src: &str) -> String {
    err(src).message().to_string()
}

/// (line, column, start, end) of an error.
fn err_at(src: &str) -> (u32, u32, usize, usize) {
    let s = err(src).span().expect("span");
    (s.line, s.column, s.start, s.end)
}

/// (line, column, start, end) of a form.
fn at(f: &Form) -> (u32, u32, usize, usize) {
    (f.span.line, f.span.column, f.span.start, f.span.end)
}

fn str_of(src: &str) -> String {
    match kind(src) {
        FormKind::Str(s) => s,
        other => panic!("{src:?} read as {other:?}, not a string"),
    }
}

fn float_of(src: &str) -> f64 {
    match kind(src) {
        FormKind::Float(x) => x,
        other => panic!("{src:?} read as {other:?}, not a float"),
    }
}

// ---------------------------------------------------------------- whitespace

#[test]
fn whitespace_and_comments() {
    assert_eq!(read(" ,\t\r\n1,2 ; comment ) ( \n 3 ;; end"), "1 2 3");
    assert_eq!(read(""), "");
    assert_eq!(read("  ; only a comment"), "");
    assert_eq!(read("#!/usr/bin/env ptc\n(x)"), "(x)");
    assert_eq!(read("[1,2,,3]"), "[1 2 3]");
}

#[test]
fn discard_skips_the_next_form() {
    assert_eq!(read("#_ 1 2"), "2");
    assert_eq!(read("[1 #_2 3]"), "[1 3]");
    assert_eq!(read("#_(a (b) c) x"), "x");
    assert_eq!(read("#_#_ 1 2 3"), "3");
    assert_eq!(read("(a #_b)"), "(a)");
    assert_eq!(read("{:a 1 #_:b #_2}"), "{:a 1}");
    assert_eq!(read("'#_a b"), "'b");
    assert_eq!(read("#_\"x\" #_[1] #_{} y"), "y");
    assert_eq!(msg("(a #_)"), "Expected a form after `#_`, got `)`");
    assert_eq!(msg("#_"), "Expected a form after `#_`, got end of input");
    assert_eq!(msg("#_ )"), "Expected a form after `#_`, got `)`");
}

// ---------------------------------------------------------------- atoms

#[test]
fn nil_and_booleans() {
    assert_eq!(kind("nil"), FormKind::Nil);
    assert_eq!(kind("true"), FormKind::Bool(true));
    assert_eq!(kind("false"), FormKind::Bool(false));
    assert_eq!(kind("nil?"), FormKind::Symbol("nil?".into()));
    assert_eq!(kind("true-ish"), FormKind::Symbol("true-ish".into()));
}

#[test]
fn integers() {
    for (src, n) in [
        ("0", 0),
        ("42", 42),
        ("+5", 5),
        ("-0", 0),
        ("-17", -17),
        ("9223372036854775807", i64::MAX),
        ("-9223372036854775808", i64::MIN),
        ("0x1F", 31),
        ("0XfF", 255),
        ("-0x10", -16),
        ("+0x10", 16),
        ("0x7FFFFFFFFFFFFFFF", i64::MAX),
        ("-0x8000000000000000", i64::MIN),
    ] {
        assert_eq!(kind(src), FormKind::Int(n), "{src}");
    }
}

#[test]
fn integer_errors() {
    assert_eq!(
        msg("9223372036854775808"),
        "Integer literal `9223372036854775808` is out of range"
    );
    assert_eq!(
        msg("-9223372036854775809"),
        "Integer literal `-9223372036854775809` is out of range"
    );
    assert_eq!(
        msg("0x8000000000000000"),
        "Integer literal `0x8000000000000000` is out of range"
    );
    assert_eq!(
        msg("0x1FFFFFFFFFFFFFFFFFFFF"),
        "Integer literal `0x1FFFFFFFFFFFFFFFFFFFF` is out of range"
    );
    assert_eq!(
        msg("1/3"),
        "Ratio literals such as `1/3` are not supported; use `(/ 1 3)`"
    );
    assert_eq!(
        msg("-22/7"),
        "Ratio literals such as `-22/7` are not supported; use `(/ -22 7)`"
    );
    assert!(msg("1N").starts_with("BigInt literals such as `1N` are not supported"));
    assert!(msg("1M").starts_with("BigDecimal literals such as `1M` are not supported"));
    assert!(msg("1.5M").starts_with("BigDecimal literals such as `1.5M`"));
    assert_eq!(
        msg("017"),
        "Integer literal `017` has a leading zero; octal literals are not supported"
    );
    assert!(msg("00").contains("leading zero"));
    assert!(msg("-017").contains("leading zero"));
    assert_eq!(
        msg("2r1010"),
        "Radix literals such as `2r1010` are not supported"
    );
    for bad in [
        "1abc", "1.2.3", "1e", "1e+", "0x", "0xZ", "1.5N", "1_000", "1/", "1/x", "-1a", "12:30",
    ] {
        assert_eq!(msg(bad), format!("Invalid number `{bad}`"), "{bad}");
    }
}

#[test]
fn floats() {
    for (src, x) in [
        ("3.25", 3.25),
        ("-0.5", -0.5),
        ("+0.5", 0.5),
        ("1.0", 1.0),
        ("1.", 1.0),
        ("2.5e10", 2.5e10),
        ("1.23e-4", 1.23e-4),
        ("1e3", 1000.0),
        ("1E3", 1000.0),
        ("1e+3", 1000.0),
        ("01.5", 1.5),
        ("0.0", 0.0),
    ] {
        assert_eq!(float_of(src), x, "{src}");
    }
    assert!(float_of("-0.0").is_sign_negative());
    assert_eq!(float_of("1e999"), f64::INFINITY);
    assert_eq!(float_of("##Inf"), f64::INFINITY);
    assert_eq!(float_of("##-Inf"), f64::NEG_INFINITY);
    assert!(float_of("##NaN").is_nan());
    assert_eq!(read("[##Inf ##-Inf]"), "[inf -inf]");
    assert_eq!(
        msg("##foo"),
        "Unknown symbolic value `##foo`; expected `##Inf`, `##-Inf` or `##NaN`"
    );
    assert!(msg("## Inf").starts_with("Unknown symbolic value `##`"));
    assert!(msg("##").starts_with("Unknown symbolic value `##`"));
    // Rust's float parser would accept these; the reader must not.
    assert_eq!(kind("inf"), FormKind::Symbol("inf".into()));
    assert_eq!(kind("NaN"), FormKind::Symbol("NaN".into()));
    assert_eq!(msg("1inf"), "Invalid number `1inf`");
}

#[test]
fn strings() {
    assert_eq!(str_of(r#""""#), "");
    assert_eq!(str_of(r#""hello world""#), "hello world");
    assert_eq!(
        str_of(r#""a\\b\"c\nd\te\rf\bg\fh""#),
        "a\\b\"c\nd\te\rf\u{8}g\u{c}h"
    );
    assert_eq!(str_of(r#""\u0041\u00e9\u00E9""#), "Aéé");
    assert_eq!(str_of(r#""\uD83D\uDE00""#), "😀");
    assert_eq!(str_of(r#""\0\101\7""#), "\0A\u{7}");
    assert_eq!(str_of(r#""\1012""#), "A2");
    assert_eq!(str_of("\"line one\nline two\""), "line one\nline two");
    assert_eq!(str_of("\"λ → 😀\""), "λ → 😀");
    assert_eq!(str_of(r#""semi; (paren] #_x""#), "semi; (paren] #_x");
}

#[test]
fn string_errors() {
    // The current specification keeps unknown escapes as written.
    assert_eq!(str_of(r#""a\qb""#), "a\\qb");
    assert_eq!(str_of(r#""\d+\é""#), "\\d+\\é");
    assert_eq!(
        msg("\"a\\\nb\""),
        "A backslash cannot end a line in a string; write `\\n` for a newline"
    );
    assert_eq!(err_at("\"a\\\nb\""), (1, 3, 2, 4));
    assert_eq!(
        msg(r#""\u12G4""#),
        "Invalid unicode escape `\\u12G4` in string"
    );
    assert_eq!(
        msg(r#""\uD800""#),
        "Invalid unicode escape `\\uD800` in string"
    );
    assert_eq!(
        msg(r#""\uDC00x""#),
        "Invalid unicode escape `\\uDC00` in string"
    );
    assert_eq!(msg(r#""\u1" x"#), "Invalid unicode escape `\\u1` in string");
    assert_eq!(err_at(r#"x "\u12G4""#), (1, 4, 3, 9));
    assert_eq!(
        msg(r#""\400""#),
        "Octal escape `\\400` is out of range (max `\\377`)"
    );
    assert_eq!(msg("(f \"abc"), "Unterminated string starting at 1:4");
    assert_eq!(err_at("(f \"abc"), (1, 4, 3, 4));
    assert_eq!(msg("\"abc\\"), "Unterminated string starting at 1:1");
    assert_eq!(msg("\"\\u00"), "Unterminated string starting at 1:1");
}

#[test]
fn characters() {
    for (src, s) in [
        (r"\a", "a"),
        (r"\λ", "λ"),
        (r"\😀", "😀"),
        (r"\newline", "\n"),
        (r"\space", " "),
        (r"\tab", "\t"),
        (r"\return", "\r"),
        (r"\backspace", "\u{8}"),
        (r"\formfeed", "\u{c}"),
        (r"\u0041", "A"),
        (r"\u03bb", "λ"),
        (r"\o101", "A"),
        (r"\(", "("),
        (r"\)", ")"),
        (r"\[", "["),
        (r"\]", "]"),
        (r"\{", "{"),
        (r#"\""#, "\""),
        (r"\\", "\\"),
        (r"\;", ";"),
        (r"\,", ","),
        (r"\r", "r"),
        (r"\n", "n"),
        (r"\u", "u"),
        (r"\o", "o"),
        (r"\1", "1"),
        (r"\#", "#"),
        (r"\'", "'"),
    ] {
        assert_eq!(str_of(src), s, "{src}");
    }
    assert_eq!(read(r"[\a \b]"), r#"["a" "b"]"#);
    assert_eq!(read(r"(\a)"), r#"("a")"#);
    assert_eq!(read(r"\((x)"), r#""(" (x)"#);
    assert_eq!(read(r#"\" "x""#), r#""\"" "x""#);
    assert_eq!(read(r"\a\b"), r#""a" "b""#);
    assert_eq!(msg(r"\foo"), "Unknown character name `\\foo`");
    assert_eq!(err_at(r"(x \foo)"), (1, 4, 3, 7));
    assert_eq!(msg(r"\ab"), "Unknown character name `\\ab`");
    assert_eq!(msg(r"\Newline"), "Unknown character name `\\Newline`");
    assert_eq!(msg(r"\uZZZZ"), "Invalid unicode character `\\uZZZZ`");
    assert_eq!(msg(r"\uD800"), "Invalid unicode character `\\uD800`");
    assert_eq!(msg(r"\u004"), "Unknown character name `\\u004`");
    assert_eq!(
        msg(r"\o400"),
        "Octal character `\\o400` is out of range (max `\\o377`)"
    );
    assert_eq!(msg("\\"), "Expected a character after `\\`");
}

#[test]
fn keywords() {
    for (src, k) in [
        (":name", "name"),
        (":user-id", "user-id"),
        (":a/b", "a/b"),
        (":a.b", "a.b"),
        (":valid?", "valid?"),
        (":1", "1"),
        (":*x*", "*x*"),
        (":nil", "nil"),
        (":é", "é"),
    ] {
        assert_eq!(kind(src), FormKind::Keyword(k.into()), "{src}");
    }
    assert_eq!(read("[:a :b]"), "[:a :b]");
    assert_eq!(read("{:a 1}"), "{:a 1}");
    assert_eq!(
        msg("::foo"),
        "Auto-resolved keywords such as `::foo` are not supported; write `:foo`"
    );
    assert_eq!(msg(":"), "Expected a keyword name after `:`");
    assert_eq!(msg(": a"), "Expected a keyword name after `:`");
    assert_eq!(msg("(:)"), "Expected a keyword name after `:`");
    assert_eq!(msg(":a|b"), "Invalid character `|` in keyword `:a|b`");
    assert_eq!(msg(":a:b"), "Invalid character `:` in keyword `:a:b`");
    assert_eq!(msg(":a/"), "Invalid keyword `:a/`");
    assert_eq!(msg(":/a"), "Invalid keyword `:/a`");
}

#[test]
fn symbols() {
    for s in [
        "foo",
        "user-id",
        "valid?",
        "swap!",
        "*out*",
        "a->b",
        "<=",
        "not=",
        "/",
        "tool/search",
        "data/x",
        "clojure.string/join",
        "str/join",
        "Math/abs",
        "Double/POSITIVE_INFINITY",
        "java.util.Date.",
        ".getTime",
        ".5",
        "%",
        "%1",
        "%&",
        "&",
        "-",
        "+",
        "->",
        "->>",
        "-foo",
        "+x",
        "-.5",
        "a'",
        "x#",
        "λ",
        "$x",
        "a1",
        "clojure.core//",
        "inf",
    ] {
        assert_eq!(kind(s), FormKind::Symbol(s.into()), "{s}");
    }
    assert_eq!(msg("a|b"), "Invalid character `|` in symbol `a|b`");
    assert_eq!(msg("a:b"), "Invalid character `:` in symbol `a:b`");
    assert_eq!(msg("a\u{0}"), "Invalid character `\\0` in symbol `a\\0`");
    assert_eq!(msg("/a"), "Invalid symbol `/a`");
    assert_eq!(msg("a/"), "Invalid symbol `a/`");
    assert_eq!(msg("|"), "Invalid character `|` in symbol `|`");
}

#[test]
fn numbers_versus_symbols() {
    assert_eq!(read("-1 +1 -1.5 - + -a"), "-1 1 -1.5 - + -a");
    assert_eq!(msg("1abc"), "Invalid number `1abc`");
    assert_eq!(err_at("(+ 1 2abc)"), (1, 6, 5, 9));
}

// ---------------------------------------------------------------- collections

#[test]
fn collections() {
    assert_eq!(read("(f 1 2)"), "(f 1 2)");
    assert_eq!(read("()"), "()");
    assert_eq!(read("[1 [2 [3]]]"), "[1 [2 [3]]]");
    assert_eq!(read("{:a 1 :b [2]}"), "{:a 1 :b [2]}");
    assert_eq!(read("{}"), "{}");
    assert_eq!(read("#{1 2}"), "#{1 2}");
    assert_eq!(read("#{1 1}"), "#{1 1}");
    assert_eq!(read("#{}"), "#{}");
    assert_eq!(read("#(+ % 1)"), "#(+ % 1)");
    assert_eq!(read("#(f %1 %2 %&)"), "#(f %1 %2 %&)");
    assert_eq!(read("#()"), "#()");
    assert_eq!(read("(map #(* % 2) xs)"), "(map #(* % 2) xs)");
    assert_eq!(read("#(f [%])"), "#(f [%])");
    assert_eq!(read("#(a) #(b)"), "#(a) #(b)");
}

#[test]
fn map_must_be_even() {
    assert_eq!(
        msg("{:a 1 :b}"),
        "Map literal must have an even number of forms, got 3"
    );
    assert_eq!(err_at("[1\n  {:a 1 :b}]"), (2, 3, 5, 14));
    assert_eq!(
        msg("{:a}"),
        "Map literal must have an even number of forms, got 1"
    );
    // A discarded form does not count.
    assert_eq!(read("{:a 1 #_:b}"), "{:a 1}");
}

#[test]
fn nested_anonymous_functions_are_rejected() {
    assert_eq!(msg("#(f #(g %))"), "Nested `#(...)` is not allowed");
    assert_eq!(err_at("#(f [1 #(g %)])"), (1, 8, 7, 9));
    assert_eq!(msg("#(f '#(g))"), "Nested `#(...)` is not allowed");
}

#[test]
fn regex_literals() {
    assert_eq!(kind(r#"#"\d+""#), FormKind::Regex(r"\d+".into()));
    assert_eq!(kind(r#"#"a\"b""#), FormKind::Regex(r#"a\"b"#.into()));
    assert_eq!(kind(r#"#"\\""#), FormKind::Regex(r"\\".into()));
    assert_eq!(kind(r#"#"""#), FormKind::Regex(String::new()));
    assert_eq!(kind("#\"a\nb\""), FormKind::Regex("a\nb".into()));
    assert_eq!(kind(r#"#"λ\λ""#), FormKind::Regex(r"λ\λ".into()));
    assert_eq!(
        msg(r#"(re-find #"\d+ x)"#),
        "Unterminated regex starting at 1:10"
    );
    assert_eq!(msg(r#"#"abc\""#), "Unterminated regex starting at 1:1");
}

#[test]
fn quote_and_var() {
    assert_eq!(read("'x"), "'x");
    assert_eq!(read("'(1 2)"), "'(1 2)");
    assert_eq!(read("' x"), "'x");
    assert_eq!(read("''x"), "''x");
    assert_eq!(read("['a 'b]"), "['a 'b]");
    assert_eq!(read("#'foo"), "#'foo");
    assert_eq!(read("#'tool/search"), "#'tool/search");
    assert_eq!(read("#' foo"), "#'foo");
    assert_eq!(msg("#'1"), "Var quote `#'` must be followed by a symbol");
    assert_eq!(msg("#'(a)"), "Var quote `#'` must be followed by a symbol");
    assert_eq!(err_at("x #'(a)"), (1, 3, 2, 7));
    assert_eq!(msg("(a ')"), "Expected a form after `'`, got `)`");
    assert_eq!(err_at("(a ')"), (1, 4, 3, 4));
    assert_eq!(msg("'"), "Expected a form after `'`, got end of input");
    assert_eq!(msg("#'"), "Expected a form after `#'`, got end of input");
}

#[test]
fn unsupported_reader_syntax() {
    for (src, m) in [
        ("@x", "Deref (`@`) is not supported"),
        ("(f @a)", "Deref (`@`) is not supported"),
        ("^:private x", "Metadata (`^`) is not supported"),
        ("#^{:a 1} x", "Metadata (`#^`) is not supported"),
        ("`(a ~b)", "Syntax quote is not supported"),
        ("~x", "Unquote (`~`) is not supported"),
        ("~@xs", "Unquote (`~`) is not supported"),
        ("#?(:clj 1)", "Reader conditionals (`#?`) are not supported"),
        (
            "#?@(:clj [1])",
            "Reader conditionals (`#?`) are not supported",
        ),
        (
            "#inst \"2024-01-01\"",
            "Tagged literals such as `#inst` are not supported",
        ),
        (
            "#uuid \"x\"",
            "Tagged literals such as `#uuid` are not supported",
        ),
        (
            "#:ns{:a 1}",
            "Namespaced map literals such as `#:ns{...}` are not supported",
        ),
        ("#=(+ 1 2)", "Read-time evaluation (`#=`) is not supported"),
        ("#<x>", "Unsupported reader syntax `#<`"),
        ("# x", "Unsupported reader syntax `# `"),
        ("#", "Unexpected end of input after `#`"),
    ] {
        assert_eq!(msg(src), m, "{src}");
    }
    // A terminating character ends the token before it.
    assert_eq!(msg("a@b"), "Deref (`@`) is not supported");
    assert_eq!(err_at("a@b"), (1, 2, 1, 2));
}

#[test]
fn delimiters_end_tokens() {
    assert_eq!(read("[1 2]"), "[1 2]");
    assert_eq!(read("(a)(b)"), "(a) (b)");
    assert_eq!(read(r#""a""b""#), r#""a" "b""#);
    assert_eq!(read(r#"1"a""#), r#"1 "a""#);
    assert_eq!(read("[a]b"), "[a] b");
    assert_eq!(read("x;comment"), "x");
    assert_eq!(read(":a[1]"), ":a [1]");
    assert_eq!(read("a#[1]"), "a# [1]");
}

// ---------------------------------------------------------------- errors

#[test]
fn unbalanced_delimiters() {
    assert_eq!(msg(")"), "Unexpected `)`");
    assert_eq!(err_at("(a) )"), (1, 5, 4, 5));
    assert_eq!(msg("]"), "Unexpected `]`");
    assert_eq!(msg("(a b"), "Unclosed `(` opened at 1:1");
    assert_eq!(err_at("(a b"), (1, 1, 0, 1));
    assert_eq!(msg("[1 2"), "Unclosed `[` opened at 1:1");
    assert_eq!(msg("x {:a 1"), "Unclosed `{` opened at 1:3");
    assert_eq!(msg("#{1"), "Unclosed `#{` opened at 1:1");
    assert_eq!(err_at("#{1"), (1, 1, 0, 2));
    assert_eq!(msg("#(f"), "Unclosed `#(` opened at 1:1");
    assert_eq!(
        msg("(a]"),
        "Unexpected `]`, expected `)` to close `(` opened at 1:1"
    );
    assert_eq!(err_at("(a]"), (1, 3, 2, 3));
    assert_eq!(
        msg("#{1)"),
        "Unexpected `)`, expected `}` to close `#{` opened at 1:1"
    );
    // The innermost unclosed opener is reported.
    assert_eq!(msg("(a\n  (b\n    [c"), "Unclosed `[` opened at 3:5");
    assert_eq!(err_at("(a\n  (b\n    [c"), (3, 5, 12, 13));
}

#[test]
fn error_spans_on_later_lines() {
    let src = "(defn f [x]\n  (+ x 1))\n(f 1abc)";
    assert_eq!(msg(src), "Invalid number `1abc`");
    assert_eq!(err_at(src), (3, 4, 26, 30));
    let src = "(a)\n(b)\n  (c))";
    assert_eq!(msg(src), "Unexpected `)`");
    assert_eq!(err_at(src), (3, 6, 13, 14));
    let src = "x\ny\n \"λ\" \\bad";
    assert_eq!(err_at(src), (3, 6, 10, 14));
    let e = err("1\n2\n  @x");
    assert_eq!(
        e.to_string(),
        "parse-error at 3:3: Deref (`@`) is not supported"
    );
}

#[test]
fn nesting_is_capped() {
    let deep = |n: usize| "(".repeat(n) + &")".repeat(n);
    assert!(read_program(&deep(MAX_DEPTH as usize)).is_ok());
    assert_eq!(
        msg(&deep(MAX_DEPTH as usize + 1)),
        "Nesting deeper than 512 levels"
    );
    assert_eq!(err_at(&deep(MAX_DEPTH as usize + 1)), (1, 513, 512, 513));
    let quotes = "'".repeat(MAX_DEPTH as usize) + "x";
    assert!(read_program(&quotes).is_ok());
    let mixed = "[{#{'(".repeat(MAX_DEPTH as usize / 5) + "x";
    assert!(matches!(read_status(&mixed), ReadStatus::Incomplete));
    for src in [
        "(".repeat(100_000),
        ")".repeat(100_000),
        "[".repeat(100_000),
        "{".repeat(100_000),
        "#{".repeat(100_000),
        "#(".repeat(100_000),
        "'".repeat(100_000),
        "#'".repeat(100_000),
        "#_".repeat(100_000),
        "@".repeat(100_000),
        "([{".repeat(40_000) + &"}])".repeat(40_000),
    ] {
        let e = err(&src);
        assert!(
            e.message().starts_with("Nesting deeper than 512 levels")
                || e.message().starts_with("Unexpected")
                || e.message().starts_with("Deref")
                || e.message().starts_with("Nested"),
            "{}",
            e.message()
        );
        assert!(matches!(read_status(&src), ReadStatus::Invalid(_)));
    }
}

#[test]
fn deep_nesting_needs_no_deep_machine_stack() {
    // The reader keeps open forms on the heap; only dropping the result
    // recurses, and 512 levels of that fit easily in a small stack.
    let n = MAX_DEPTH as usize / 4;
    let src = "([#{'".repeat(n) + "x" + &"}])".repeat(n);
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || read_program(&src).map(|forms| forms.len()))
        .expect("spawn");
    assert_eq!(handle.join().expect("no stack overflow").ok(), Some(1));
}

// ---------------------------------------------------------------- spans

#[test]
fn spans_of_nested_forms() {
    let src = "(let [x 1]\n  (+ x\n     \"s\"))";
    let forms = read_program(src).unwrap();
    assert_eq!(forms.len(), 1);
    let top = &forms[0];
    assert_eq!(at(top), (1, 1, 0, src.len()));
    let FormKind::List(items) = &top.kind else {
        panic!("not a list")
    };
    assert_eq!(at(&items[0]), (1, 2, 1, 4));
    assert_eq!(at(&items[1]), (1, 6, 5, 10));
    let FormKind::Vector(binding) = &items[1].kind else {
        panic!("not a vector")
    };
    assert_eq!(at(&binding[1]), (1, 9, 8, 9));
    assert_eq!(at(&items[2]), (2, 3, 13, 27));
    let FormKind::List(call) = &items[2].kind else {
        panic!("not a list")
    };
    assert_eq!(at(&call[2]), (3, 6, 23, 26));
}

#[test]
fn spans_count_characters_for_columns_and_bytes_for_offsets() {
    let forms = read_program("\"λλ\" x\n  é y").unwrap();
    assert_eq!(at(&forms[1]), (1, 6, 7, 8));
    assert_eq!(at(&forms[2]), (2, 3, 11, 13));
    assert_eq!(at(&forms[3]), (2, 5, 14, 15));
    let forms = read_program("a\r\nb").unwrap();
    assert_eq!(at(&forms[1]), (2, 1, 3, 4));
}

#[test]
fn an_error_found_later_points_back_to_its_line_and_column() {
    // The unclosed `[` is reported after the lines below it were read:
    // its position is counted again from the start.
    let src = "ü\n é [b\n c\n d ü";
    assert_eq!(msg(src), "Unclosed `[` opened at 2:4");
    assert_eq!(err_at(src), (2, 4, 7, 8));
}

#[test]
fn spans_of_prefixed_and_special_forms() {
    let forms = read_program("'x #'y #(z) #{1} #\"r\" ##Inf \\a :k \"s\"").unwrap();
    let spans: Vec<_> = forms.iter().map(|f| (f.span.start, f.span.end)).collect();
    assert_eq!(
        spans,
        [
            (0, 2),
            (3, 6),
            (7, 11),
            (12, 16),
            (17, 21),
            (22, 27),
            (28, 30),
            (31, 33),
            (34, 37)
        ]
    );
    // A discarded form leaves no trace in the spans of its neighbours.
    let forms = read_program("#_ skipped kept").unwrap();
    assert_eq!(at(&forms[0]), (1, 12, 11, 15));
}

#[test]
fn long_single_line_spans() {
    // One long line exercises the incremental column tracking.
    let src = (0..2000)
        .map(|i| format!("λ{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    let forms = read_program(&src).unwrap();
    let mut column = 1;
    for (i, f) in forms.iter().enumerate() {
        assert_eq!(f.span.column, column);
        assert_eq!(f.span.line, 1);
        column += u32::try_from(format!("λ{i} ").chars().count()).unwrap();
    }
}

// ---------------------------------------------------------------- read_one

#[test]
fn read_one_wants_exactly_one_form() {
    assert_eq!(show(&read_one("  ; c\n (a b) ; d").unwrap()), "(a b)");
    let e = read_one("").unwrap_err();
    assert_eq!(e.message(), "Expected a form, got end of input");
    assert_eq!(read_one("#_x ; c").unwrap_err().message(), e.message());
    let e = read_one("1 (2) 3").unwrap_err();
    assert_eq!(e.message(), "Expected exactly one form, got 3");
    let span = e.span().unwrap();
    assert_eq!((span.start, span.end), (2, 5));
    assert_eq!(read_one("1 )").unwrap_err().message(), "Unexpected `)`");
}

// ---------------------------------------------------------------- read_status

#[test]
fn read_status_complete() {
    for src in [
        "",
        "   ",
        "; just a comment",
        "(+ 1 2)",
        "1 2 3",
        "#_x",
        "\"a\nb\"",
    ] {
        assert!(matches!(read_status(src), ReadStatus::Complete), "{src:?}");
    }
}

#[test]
fn read_status_incomplete() {
    for src in [
        "(",
        "(+ 1",
        "(defn f [x]\n  (+ x",
        "[1 2",
        "{:a",
        "#{1",
        "#(+ %",
        "\"abc",
        "(str \"a\nb",
        "#\"\\d+",
        "'",
        "#'",
        "#_",
        "(a '",
        "(a ; comment )",
        "(a \"b\\",
        "(\"\\u00",
    ] {
        assert!(
            matches!(read_status(src), ReadStatus::Incomplete),
            "{src:?}"
        );
    }
}

#[test]
fn read_status_invalid() {
    for src in [
        ")",
        "(a))",
        "(a]",
        "{:a}",
        "1abc",
        "(f 1/3",
        "@x",
        "#",
        "\"\\u12G4\"",
        "#(#(",
        ":",
    ] {
        match read_status(src) {
            ReadStatus::Invalid(e) => assert_eq!(e.kind(), ErrorKind::Parse, "{src:?}"),
            _ => panic!("{src:?} should be invalid"),
        }
    }
}

// ---------------------------------------------------------------- robustness

#[test]
fn weird_inputs_do_not_panic() {
    for src in [
        "#",
        "\\",
        "\"",
        ":",
        "#{",
        "#(",
        "#\"",
        "##",
        "#_",
        "#'",
        "'",
        "^",
        "`",
        "~",
        "@",
        ",",
        "\\u",
        "\\u12",
        "\"\\",
        "\"\\u",
        "\"\\uD83D\\u",
        "\"\\uD83D\"",
        "#_#_",
        "((",
        "))",
        "{{",
        "}}",
        "\u{0}",
        "\u{feff}",
        "\r",
        "\\\n",
        "#\\",
        "#\u{e9}",
        "\\\u{e9}",
        ":\u{e9}",
        "0x",
        "-",
        "+",
        "-0x",
        "1e",
        ".",
        "..",
        "/",
        "//",
        "#!",
        ";",
        "\"\u{1F600}",
    ] {
        let _ = read_program(src);
        let _ = read_status(src);
        let _ = read_one(src);
    }
}

/// A tiny deterministic generator, so the fuzz loop needs no dependency
/// and always runs the same cases.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) as u32
    }

    fn below(&mut self, n: usize) -> usize {
        self.next() as usize % n
    }
}

/// Check the invariants of any read: no panic, spans inside the input and
/// on character boundaries, and the three entry points agreeing.
fn check_invariants(src: &str) {
    let in_bounds = |start: usize, end: usize| {
        start <= end && end <= src.len() && src.is_char_boundary(start) && src.is_char_boundary(end)
    };
    fn walk(f: &Form, ok: &dyn Fn(usize, usize) -> bool, src: &str) {
        assert!(
            ok(f.span.start, f.span.end),
            "bad span {:?} in {src:?}",
            f.span
        );
        assert!(f.span.line >= 1 && f.span.column >= 1);
        match &f.kind {
            FormKind::List(v)
            | FormKind::Vector(v)
            | FormKind::Map(v)
            | FormKind::Set(v)
            | FormKind::AnonFn(v) => {
                for c in v {
                    assert!(c.span.start >= f.span.start && c.span.end <= f.span.end);
                    walk(c, ok, src);
                }
            }
            FormKind::Quote(q) => walk(q, ok, src),
            _ => {}
        }
    }
    match read_program(src) {
        Ok(forms) => {
            for f in &forms {
                walk(f, &in_bounds, src);
            }
            assert!(matches!(read_status(src), ReadStatus::Complete), "{src:?}");
            assert_eq!(read_one(src).is_ok(), forms.len() == 1, "{src:?}");
        }
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::Parse);
            let span = e.span().expect("parse errors carry a span");
            assert!(in_bounds(span.start, span.end), "bad error span in {src:?}");
            assert!(!matches!(read_status(src), ReadStatus::Complete), "{src:?}");
            assert!(read_one(src).is_err());
        }
    }
}

#[test]
fn fuzz_random_text_does_not_panic() {
    const PIECES: &[&str] = &[
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        "#{",
        "#(",
        "#\"",
        "#'",
        "#_",
        "##",
        "#",
        "'",
        "\"",
        "\\",
        ":",
        "::",
        ";",
        "\n",
        " ",
        ",",
        "@",
        "^",
        "`",
        "~",
        "%",
        "a",
        "x/y",
        "/",
        "-",
        "+",
        "0",
        "1",
        "0x",
        "9",
        ".",
        "e",
        "N",
        "M",
        "\\u",
        "\\n",
        "\\newline",
        "λ",
        "😀",
        "é",
        "nil",
        "true",
        "Inf",
        "-Inf",
        "NaN",
        "\t",
        "\r",
        "\u{0}",
        "\\\"",
        "17",
        "/3",
        "?",
        "!",
    ];
    let mut rng = Lcg(0x5eed);
    for _ in 0..4000 {
        let n = rng.below(24);
        let src: String = (0..n).map(|_| PIECES[rng.below(PIECES.len())]).collect();
        check_invariants(&src);
    }
    for _ in 0..2000 {
        let n = rng.below(40);
        let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
        check_invariants(&String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn every_prefix_of_a_valid_program_reads_without_panic() {
    let program = "(defn f [x & ys]\n  ;; doc\n  (let [m {:a 1, :b #{2}} s \"q\\\"\\n\" r #\"\\d+\"]\n    (map #(+ % 1) ['x #'y \\a \\space ##Inf -1.5e3 0x1F])))";
    assert!(read_program(program).is_ok());
    for (end, c) in program.char_indices() {
        let prefix = &program[..end];
        check_invariants(prefix);
        // Cut at whitespace (as a REPL line would be), a prefix is only
        // ever incomplete or complete: the missing text makes it valid.
        if !c.is_whitespace() {
            continue;
        }
        assert!(
            !matches!(read_status(prefix), ReadStatus::Invalid(_)),
            "prefix {prefix:?} is invalid"
        );
    }
}

#[test]
fn reads_a_realistic_program() {
    let line = "(let [{:keys [id name]} (tool/search {:q \"x\" :limit 10})] (when (> (count name) 3) (println (str/join \", \" [id name])))) ; note\n";
    let src = line.repeat(200);
    let forms = read_program(&src).unwrap();
    assert_eq!(forms.len(), 200);
    assert_eq!(forms[199].span.line, 200);
}
