//! The embedding API of the evaluator: hosts, tool calls, prints,
//! rollback of the user namespace, return values, history.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use ptc_lisp::error::{Error, ErrorKind, Result};
use ptc_lisp::eval::{self, Globals, Host, Outcome, Program, RunOptions, ToolContext};
use ptc_lisp::value::{pr_str, Value};

/// A host with one data key and two tools, recording calls.
#[derive(Default)]
struct TestHost {
    calls: Mutex<Vec<String>>,
}

impl Host for TestHost {
    fn data(&self, name: &str) -> Option<Value> {
        match name {
            "limit" => Some(Value::Int(2)),
            "search" => Some(Value::str("data named like a tool")),
            _ => None,
        }
    }
    fn has_tool(&self, name: &str) -> bool {
        matches!(name, "search" | "fetch-user" | "broken")
    }
    fn call_tool(&self, name: &str, args: &[Value], _: &ToolContext) -> Result<Value> {
        let printed: Vec<String> = args.iter().map(pr_str).collect();
        self.calls
            .lock()
            .unwrap()
            .push(format!("{name}({})", printed.join(" ")));
        match name {
            "broken" => Err(Error::new(ErrorKind::Tool, "the service is down")),
            _ => Ok(Value::vector([
                Value::str(name),
                Value::Int(args.len() as i64),
            ])),
        }
    }
    fn tool_names(&self) -> Vec<String> {
        vec!["search".into(), "fetch-user".into(), "broken".into()]
    }
    fn data_names(&self) -> Vec<String> {
        vec!["limit".into(), "search".into()]
    }
}

fn run(src: &str, host: &TestHost, globals: &Globals) -> eval::RunOutput {
    let program = Program::compile(src).unwrap();
    eval::run(&program, host, globals, RunOptions::default())
}

#[test]
fn tool_calls_go_through_the_host_in_program_order() {
    let host = TestHost::default();
    let out = run(
        "(let [a (tool/fetch-user {:id 1}) b (tool/search \"x\" 2)] [a b])",
        &host,
        &Globals::default(),
    );
    assert_eq!(
        pr_str(out.result.unwrap().value()),
        "[[\"fetch-user\" 1] [\"search\" 2]]"
    );
    assert_eq!(
        *host.calls.lock().unwrap(),
        vec!["fetch-user({:id 1})", "search(\"x\" 2)"]
    );
    assert_eq!(out.tool_calls.len(), 2);
    assert_eq!(out.tool_calls[0].name, "fetch-user");
    assert_eq!(
        pr_str(out.tool_calls[1].result.as_ref().unwrap()),
        "[\"search\" 2]"
    );
}

#[test]
fn bare_names_fall_back_to_tools_and_data_but_ambiguity_is_an_error() {
    let host = TestHost::default();
    let out = run(
        "[data/limit limit (fetch-user)]",
        &host,
        &Globals::default(),
    );
    assert_eq!(
        pr_str(out.result.unwrap().value()),
        "[2 2 [\"fetch-user\" 0]]"
    );
    let out = run("(search 1)", &host, &Globals::default());
    let err = out.result.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AmbiguousReference);
    assert!(
        err.message().contains("`tool/search` and `data/search`"),
        "{err}"
    );
    // A local definition wins over both; explicit namespaces still work.
    let out = run(
        "(def limit 99) [limit data/limit]",
        &host,
        &Globals::default(),
    );
    assert_eq!(pr_str(out.result.unwrap().value()), "[99 2]");
}

#[test]
fn tool_errors_and_unknown_tools_are_clear() {
    let host = TestHost::default();
    let err = run("(tool/broken)", &host, &Globals::default())
        .result
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Tool);
    assert!(err.message().contains("the service is down"));
    let err = run("(tool/serach {})", &host, &Globals::default())
        .result
        .unwrap_err();
    assert_eq!(err.hint(), Some("did you mean `tool/search`?"));
}

#[test]
fn a_failed_program_leaves_the_namespace_unchanged() {
    let host = TestHost::default();
    let first = run("(def a 1) (defn f [] :f)", &host, &Globals::default());
    assert!(first.result.is_ok());
    let failed = run("(def a 2) (def b 3) (inc nil)", &host, &first.globals);
    assert!(failed.result.is_err());
    assert_eq!(pr_str(&failed.globals.get("a").unwrap().value), "1");
    assert!(failed.globals.get("b").is_none());
    let names: Vec<&str> = failed.globals.names().collect();
    assert_eq!(names, vec!["a", "f"]);
}

#[test]
fn definitions_keep_docstrings_and_order() {
    let out = run(
        "(def b \"the b\" 1) (defn a \"makes a\" [x] x) (def b 2)",
        &TestHost::default(),
        &Globals::default(),
    );
    let defs: Vec<(String, Option<String>)> = out
        .globals
        .iter()
        .map(|(n, d)| (n.to_string(), d.doc.as_ref().map(|s| s.to_string())))
        .collect();
    assert_eq!(
        defs,
        vec![("b".into(), None), ("a".into(), Some("makes a".into()))]
    );
}

#[test]
fn return_values_of_called_definitions_are_recorded() {
    let out = run(
        "(defn f [x] [x]) (defn g [] 1) (defn k [x] (when x 1)) (f 1) (f {:a 2}) ((fn h [] 3))
         (k true) (k false) (k true)",
        &TestHost::default(),
        &Globals::default(),
    );
    let returns: Vec<(String, Vec<String>)> = out
        .returns
        .iter()
        .map(|(n, vs)| (n.to_string(), vs.iter().map(pr_str).collect()))
        .collect();
    // The latest value of each type, in the order the types came.
    assert_eq!(
        returns,
        vec![
            ("f".to_string(), vec!["[{:a 2}]".to_string()]),
            ("k".to_string(), vec!["1".to_string(), "nil".to_string()]),
        ]
    );
}

#[test]
fn prints_are_captured_per_call_and_truncated() {
    let out = run(
        "(println \"a\\nb\" 1) (println (apply str (map (constantly \"x\") (range 2500))))",
        &TestHost::default(),
        &Globals::default(),
    );
    assert_eq!(out.prints.len(), 2);
    assert_eq!(out.prints[0], "a\nb 1");
    assert_eq!(out.prints[1].len(), 2003);
    assert!(out.prints[1].ends_with("x..."));
}

#[test]
fn history_and_outcomes() {
    let program = Program::compile("[*1 *2 *3]").unwrap();
    let options = RunOptions {
        history: [Value::Int(1), Value::Int(2), Value::Nil],
        ..RunOptions::default()
    };
    let out = eval::run(&program, &TestHost::default(), &Globals::default(), options);
    assert_eq!(pr_str(out.result.unwrap().value()), "[1 2 nil]");
    let out = run(
        "(return {:done true})",
        &TestHost::default(),
        &Globals::default(),
    );
    assert!(matches!(out.result, Ok(Outcome::Return(_))));
    let out = run("(fail \"nope\")", &TestHost::default(), &Globals::default());
    assert!(matches!(out.result, Ok(Outcome::Fail(v)) if v.as_str() == Some("nope")));
}

#[test]
fn an_interrupt_flag_stops_the_program() {
    let flag = Arc::new(AtomicBool::new(false));
    let setter = flag.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(50));
        setter.store(true, Ordering::Relaxed);
    });
    let program = Program::compile("(loop [] (recur))").unwrap();
    let options = RunOptions {
        limits: eval::Limits {
            timeout: std::time::Duration::from_secs(30),
            max_steps: u64::MAX,
            ..Default::default()
        },
        interrupt: Some(flag),
        ..RunOptions::default()
    };
    let out = eval::run(&program, &TestHost::default(), &Globals::default(), options);
    t.join().unwrap();
    assert_eq!(out.result.unwrap_err().kind(), ErrorKind::Interrupted);
}

/// A host whose `meet` tool waits (up to 5 s) until another call of it is
/// in progress: it answers true only if two calls overlap in time.
#[derive(Default)]
struct RendezvousHost {
    arrived: Mutex<usize>,
    changed: std::sync::Condvar,
}

impl Host for RendezvousHost {
    fn data(&self, _: &str) -> Option<Value> {
        None
    }
    fn has_tool(&self, name: &str) -> bool {
        matches!(name, "meet" | "boom")
    }
    fn call_tool(&self, name: &str, args: &[Value], _: &ToolContext) -> Result<Value> {
        if name == "boom" {
            return Err(Error::new(
                ErrorKind::Tool,
                format!("boom {}", pr_str(&args[0])),
            ));
        }
        let mut arrived = self.arrived.lock().unwrap();
        *arrived += 1;
        self.changed.notify_all();
        let (arrived, timeout) = self
            .changed
            .wait_timeout_while(arrived, std::time::Duration::from_secs(5), |n| *n < 2)
            .unwrap();
        drop(arrived);
        Ok(Value::Bool(!timeout.timed_out()))
    }
}

#[test]
fn pmap_and_pcalls_run_their_branches_concurrently() {
    let host = RendezvousHost::default();
    let program = Program::compile("(pmap (fn [x] (tool/meet x)) [1 2])").unwrap();
    let out = eval::run(
        &program,
        &host,
        &Globals::default(),
        RunOptions::default().with_timeout_secs(30),
    );
    assert_eq!(pr_str(out.result.unwrap().value()), "[true true]");
    assert_eq!(out.tool_calls.len(), 2);
    assert_eq!(
        pr_str(&out.tool_calls[0].args[0]),
        "1",
        "tool calls are recorded in call order"
    );

    let host = RendezvousHost::default();
    let program = Program::compile("(pcalls #(tool/meet :a) #(tool/meet :b))").unwrap();
    let out = eval::run(
        &program,
        &host,
        &Globals::default(),
        RunOptions::default().with_timeout_secs(30),
    );
    assert_eq!(pr_str(out.result.unwrap().value()), "[true true]");
}

#[test]
fn parallel_branches_are_isolated_and_fail_in_call_order() {
    let host = RendezvousHost::default();
    let out = run(
        "(def kept 1) (pmap (fn [x] (def leaked x) (println \"in branch\" x) (* x kept)) [1 2 3])",
        &TestHost::default(),
        &Globals::default(),
    );
    assert_eq!(pr_str(out.result.unwrap().value()), "[1 2 3]");
    assert!(out.globals.get("leaked").is_none());
    assert!(out.prints.is_empty());
    let program = Program::compile("(pmap #(tool/boom %) [1 2 3])").unwrap();
    let out = eval::run(&program, &host, &Globals::default(), RunOptions::default());
    assert!(out.result.unwrap_err().message().contains("boom 1"));
    let program = Program::compile("(pcalls #(+ 1 1) #(inc nil))").unwrap();
    let err = eval::run(&program, &host, &Globals::default(), RunOptions::default())
        .result
        .unwrap_err();
    assert!(
        err.message().starts_with("`pcalls` function 1 failed"),
        "{err}"
    );
}
