//! Compression: the namespace-section format of seed 000 as shown in seed
//! 002, error collapsing, limits, stats, normalization. Tests are named
//! after the requirement IDs they check.

use ptc_lisp::compression::{
    self, build_messages, normalize, Compression, CompressionOptions, CompressionSetting, Message,
    RenderContext, Role, SingleUserCoalesced,
};
use ptc_lisp::session::{Memory, Session, Turn};
use ptc_lisp::value::Value;

use crate::util::assert_golden;

pub const MISSION: &str = "Find well-reviewed products in stock";
pub const SYSTEM: &str = "You are a PTC-Lisp programmer. Answer with one program.";

pub const PRODUCTS: &str = r#"{"products": [
  {"name": "Laptop", "price": 1200, "category": "Electronics"},
  {"name": "Mouse", "price": 25, "category": "Electronics"},
  {"name": "Desk", "price": 300, "category": "Furniture"},
  {"name": "Monitor", "price": 400, "category": "Electronics"},
  {"name": "Chair", "price": 150, "category": "Furniture"},
  {"name": "Keyboard", "price": 80, "category": "Electronics"},
  {"name": "Lamp", "price": 40, "category": "Furniture"}
]}"#;

/// The shop of seeds 001/002: three tools and a product list.
pub fn shop() -> Session {
    let mut s = Session::new();
    s.register_tool(
        "search-reviews",
        "(query :string) -> :string",
        "Search customer reviews",
        |args| {
            Ok(Value::from(format!(
                "Customer Review Summary for {}: Laptop 4.5/5, Mouse 3.2/5, Monitor 4.8/5, Keyboard 4.1/5",
                args.str("query").unwrap_or_default()
            )))
        },
    )
    .unwrap()
    .register_tool("get-inventory", "-> :map", "Units in stock per product", |_| {
        Ok(ptc_lisp::value::from_json(&serde_json::json!({
            "Laptop": 23, "Mouse": 0, "Monitor": 5, "Keyboard": 12,
            "Desk": 2, "Chair": 0, "Lamp": 9
        })))
    })
    .unwrap()
    .register_tool(
        "send-email",
        "(to :string, subject :string, body :string?) -> :bool",
        "",
        |_| Ok(Value::Bool(true)),
    )
    .unwrap();
    s.set_data_json(&serde_json::from_str(PRODUCTS).unwrap())
        .unwrap();
    s
}

/// Run programs in order, asserting each succeeds or fails as expected.
pub fn run(session: &mut Session, programs: &[(&str, bool)]) {
    for (program, ok) in programs {
        let turn = session.eval(program);
        assert_eq!(
            turn.success,
            *ok,
            "turn {}: {program}\n{:?}",
            turn.number,
            turn.error()
        );
    }
}

pub fn ctx(session: &Session, max_turns: usize) -> RenderContext {
    RenderContext::for_session(session, MISSION, max_turns).with_system_prompt(SYSTEM)
}

/// The compressed prompt for the session's next turn.
pub fn render(
    session: &Session,
    max_turns: usize,
) -> (Vec<Message>, compression::CompressionStats) {
    SingleUserCoalesced.to_messages(session.turns(), session.memory(), &ctx(session, max_turns))
}

/// The USER message of the prompt (the second message).
pub fn user(session: &Session, max_turns: usize) -> String {
    render(session, max_turns).0[1].content.clone()
}

/// Every message after the system prompt, each under a `[ROLE]` line.
pub fn transcript(messages: &[Message]) -> String {
    let mut out = String::new();
    for m in messages.iter().filter(|m| m.role != Role::System) {
        out.push_str(&format!("[{}]\n{}\n\n", m.role, m.content));
    }
    out
}

pub const T1_EXPLORE: &str = r#"(def electronics "Products in the Electronics category"
  (filter #(= (:category %) "Electronics") data/products))
(def reviews (tool/search-reviews "Electronics"))
(tool/get-inventory)"#;

pub const T2_PRINT: &str = r#"(defn in-stock? "True when the inventory lists units; checks one product" [inv p]
  (pos? (get inv (keyword (:name p)) 0)))
(def stock (tool/get-inventory))
(def available (filter #(in-stock? stock %) electronics))
(println "Available:" (count available))
(println (str/join ", " (map :name available)))"#;

pub const T_UNDEFINED: &str = "(def ranked (sort-by :rating availble))";
pub const T_TYPE_ERROR: &str = "(def total (+ 1 \"two\"))";

#[test]
fn golden_turn_1() {
    let s = shop();
    assert_golden("turn_1.txt", &user(&s, 5));
}

#[test]
fn golden_turn_3_after_two_successful_turns() {
    let mut s = shop();
    run(&mut s, &[(T1_EXPLORE, true), (T2_PRINT, true)]);
    assert_golden("turn_3.txt", &user(&s, 5));
}

#[test]
fn golden_last_two_turns_failed() {
    let mut s = shop();
    run(
        &mut s,
        &[
            (T1_EXPLORE, true),
            (T_UNDEFINED, false),
            (T_TYPE_ERROR, false),
        ],
    );
    assert_golden("failing.txt", &transcript(&render(&s, 5).0));
}

#[test]
fn golden_recovered_after_failures() {
    let mut s = shop();
    run(
        &mut s,
        &[
            (T1_EXPLORE, true),
            (T_UNDEFINED, false),
            (T_TYPE_ERROR, false),
            (T2_PRINT, true),
        ],
    );
    assert_golden("recovered.txt", &transcript(&render(&s, 6).0));
}

#[test]
fn golden_limits_reached() {
    let mut s = shop();
    // 21 tool calls and 16 println calls over three turns.
    run(
        &mut s,
        &[
            ("(doseq [p (take 7 data/products)] (tool/search-reviews (:name p)))", true),
            ("(doseq [i (range 8)] (println \"batch\" i))\n(doseq [p data/products] (tool/send-email \"ops@example.com\" (str \"Check \" (:name p))))", true),
            ("(doseq [i (range 8)] (println \"line\" i \"of a\\nmulti-line print\"))\n(doseq [q [\"a\" \"b\" \"c\" \"d\" \"e\" \"f\" \"g\"]] (tool/search-reviews q))", true),
        ],
    );
    let (messages, stats) = render(&s, 10);
    assert_eq!((stats.tool_calls_total, stats.tool_calls_shown), (21, 20));
    assert_eq!((stats.printlns_total, stats.printlns_shown), (16, 15));
    assert_golden("limits.txt", &messages[1].content);
}

#[test]
fn golden_final_turn() {
    let mut s = shop();
    run(&mut s, &[(T1_EXPLORE, true), (T2_PRINT, true)]);
    assert_golden("final_turn.txt", &user(&s, 3));
}

#[test]
fn golden_single_shot() {
    let s = shop();
    let (messages, stats) = build_messages(
        &CompressionSetting::On,
        1,
        s.turns(),
        s.memory(),
        &ctx(&s, 1),
    );
    assert!(stats.is_none(), "SS-001: no compression for max_turns 1");
    assert_golden("single_shot.txt", &transcript(&messages));
}
