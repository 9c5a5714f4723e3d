//! A compression strategy written outside the crate: "last turn only".
//!
//! It keeps the mission, the names in the user namespace and what the most
//! recent turn printed or failed with, and forgets everything older. The
//! example runs a small three-turn session, then prints the prompt each
//! strategy would send for turn 4, with token counts and the stats box.
//!
//! Run with `cargo run --example custom_compression`.

use ptc_lisp::compression::format::{to_clojure, FormatOptions};
use ptc_lisp::compression::{
    build_messages, stats_box, Compression, CompressionOptions, CompressionSetting,
    CompressionStats, Message, RenderContext,
};
use ptc_lisp::session::{Memory, Session, Turn};
use ptc_lisp::tokens::count_tokens;
use ptc_lisp::value::Value;

/// Shows only the most recent turn.
struct LastTurnOnly;

impl Compression for LastTurnOnly {
    fn name(&self) -> &str {
        "last-turn-only"
    }

    fn to_messages(
        &self,
        turns: &[Turn],
        memory: &Memory,
        ctx: &RenderContext,
    ) -> (Vec<Message>, CompressionStats) {
        let mut content = ctx.mission.clone();
        let names: Vec<&str> = memory.iter().map(|e| e.name.as_str()).collect();
        if !names.is_empty() {
            content.push_str(&format!("\n\nDefined so far: {}", names.join(", ")));
        }
        let mut stats = CompressionStats {
            enabled: true,
            strategy: self.name().to_string(),
            turns_compressed: turns.len(),
            ..CompressionStats::default()
        };
        if let Some(last) = turns.last() {
            content.push_str(&format!("\n\nLast turn ({}):", last.number));
            match last.error() {
                Some(error) => content.push_str(&format!("\nError: {error}")),
                None => {
                    // Honour the println limit the host configured.
                    let skip = last.prints.len().saturating_sub(ctx.println_limit);
                    for line in &last.prints[skip..] {
                        content.push('\n');
                        content.push_str(line);
                    }
                    if let Some(value) = last.result() {
                        let (text, _) = to_clojure(value, FormatOptions::SAMPLE);
                        content.push_str(&format!("\nResult: {text}"));
                    }
                }
            }
            for turn in turns {
                stats.printlns_total += turn.prints.len();
                stats.tool_calls_total += turn.tool_calls.len();
            }
            stats.printlns_shown = last.prints.len().min(ctx.println_limit);
            stats.printlns_dropped = stats.printlns_total - stats.printlns_shown;
            stats.tool_calls_dropped = stats.tool_calls_total;
            stats.error_turns_collapsed = turns[..turns.len() - 1]
                .iter()
                .filter(|t| !t.success)
                .count();
        }
        content.push_str(&format!("\n\nTurns left: {}", ctx.turns_left));
        (
            vec![
                Message::system(ctx.system_prompt.clone()),
                Message::user(content),
            ],
            stats,
        )
    }
}

fn main() {
    let mut session = Session::new();
    session
        .register_tool(
            "weather",
            "(city :string) -> {city :string, celsius :int}",
            "Current temperature of a city",
            |args| {
                let city = args.str("city").unwrap_or("?").to_string();
                let celsius = city.len() as i64 * 3;
                let mut m = ptc_lisp::value::Map::new();
                m.insert(Value::keyword("city"), Value::from(city));
                m.insert(Value::keyword("celsius"), Value::Int(celsius));
                Ok(Value::map(m))
            },
        )
        .expect("valid tool");
    session
        .set_data_json(&serde_json::json!({"cities": ["Oslo", "Lisbon", "Nairobi"]}))
        .expect("object");

    for program in [
        "(def readings (map tool/weather data/cities))\n(println \"got\" (count readings) \"readings\")",
        "(def warmest (last (sort-by :celsius readings)))\n(println \"warmest:\" (:city warmest))",
        "(def coldest (first (sort-by :celsius readings)))\n(- (:celsius warmest) (:celsius coldest))",
    ] {
        let turn = session.eval(program);
        println!("turn {} -> {}", turn.number, if turn.success { "ok" } else { "error" });
    }

    let mission = "Which city is warmest, and by how much over the coldest?";
    let ctx =
        RenderContext::for_session(&session, mission, 5).with_system_prompt("You write PTC-Lisp.");
    let strategies = [
        CompressionSetting::On,
        CompressionSetting::strategy_with(
            LastTurnOnly,
            CompressionOptions {
                println_limit: 5,
                ..Default::default()
            },
        ),
        CompressionSetting::Off,
    ];
    for setting in strategies {
        let (messages, stats) =
            build_messages(&setting, 5, session.turns(), session.memory(), &ctx);
        let tokens: usize = messages.iter().map(|m| count_tokens(&m.content)).sum();
        let name = stats
            .as_ref()
            .map_or("off (full history)", |s| s.strategy.as_str());
        println!(
            "\n==================== {name}: {} messages, {tokens} tokens",
            messages.len()
        );
        for m in &messages[1..] {
            println!("[{}]\n{}\n", m.role, m.content);
        }
        if let Some(stats) = &stats {
            println!("{}", stats_box(stats));
        }
    }
}
