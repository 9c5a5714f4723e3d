//! The `.clj` corpus: every file under `tests/corpus/pass` must evaluate
//! to the value in its `;; =>` header line; every file under
//! `tests/corpus/fail` must fail with the text in its `;; error:` line.

use std::path::Path;

fn files(dir: &str) -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(dir);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "clj"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no corpus files in {}", dir.display());
    files
}

fn header<'a>(src: &'a str, prefix: &str, path: &Path) -> &'a str {
    src.lines()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("{} has no `{prefix}` line", path.display()))
        .trim()
}

#[test]
fn pass_corpus() {
    for path in files("pass") {
        let src = std::fs::read_to_string(&path).unwrap();
        let expected = header(&src, ";; =>", &path);
        match crate::util::eval(&src) {
            Ok(v) => assert_eq!(crate::util::printed(&v), expected, "{}", path.display()),
            Err(e) => panic!("{} failed: {e}", path.display()),
        }
    }
}

#[test]
fn fail_corpus() {
    for path in files("fail") {
        let src = std::fs::read_to_string(&path).unwrap();
        let expected = header(&src, ";; error:", &path);
        match crate::util::eval(&src) {
            Ok(v) => panic!(
                "{} should fail, gave {}",
                path.display(),
                crate::util::printed(&v)
            ),
            Err(e) => assert!(
                e.to_string().contains(expected),
                "{}: `{e}` lacks `{expected}`",
                path.display()
            ),
        }
    }
}
