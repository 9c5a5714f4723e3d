//! Lays a digest's sections out within one token cap: the first block
//! (the goal) is written whole when it fits and shortened only as a last
//! resort; the other sections share what is left by weight, the unused
//! part of each flowing to the next, and a second pass gives what is
//! still free to the sections that were cut. A cut is always marked with
//! an exact count. The whole text, header included, never exceeds the
//! cap. No I/O.

use crate::tokens::TokenModel;

/// One item of a section; `count` is how many facts it stands for (a
/// line of files grouped by directory stands for each file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub text: String,
    pub count: usize,
}

impl Item {
    pub fn one(text: impl Into<String>) -> Item {
        Item {
            text: text.into(),
            count: 1,
        }
    }
}

/// Which items a section keeps when not all fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// The first ones, then `(+N more)`.
    Tail,
    /// The first and the last, with `(+N more)` between.
    Middle,
    /// The last ones, after `(+N earlier)`.
    Newest,
}

/// A `## Title` section of `- item` lines, or (with `label`) one
/// `Title: a; b; c` line.
#[derive(Debug, Clone)]
pub struct Block {
    pub title: &'static str,
    pub items: Vec<Item>,
    pub cut: Cut,
    pub weight: usize,
    pub label: bool,
}

impl Block {
    pub fn new(title: &'static str, items: Vec<Item>, cut: Cut, weight: usize) -> Block {
        Block {
            title,
            items,
            cut,
            weight,
            label: false,
        }
    }
}

/// `header`, then `goal` (a section shortened only when nothing else is
/// left), then `blocks`, within `max` tokens.
pub fn lay_out(
    header: &str,
    goal: Option<Block>,
    blocks: Vec<Block>,
    max: usize,
    model: TokenModel,
) -> String {
    let count = |s: &str| model.count(s);
    let mut out = String::new();
    if count(header) <= max {
        out.push_str(header);
    }
    let mut used = count(&out);
    if let Some(goal) = goal.filter(|g| !g.items.is_empty()) {
        let room = max.saturating_sub(used + 1);
        let text = render(&goal, room, model).or_else(|| shortened(&goal, room, model));
        if let Some(text) = text {
            out.push_str(&text);
            used = count(&out);
        }
    }
    let blocks: Vec<Block> = blocks.into_iter().filter(|b| !b.items.is_empty()).collect();
    // One token of slack per block for the joins.
    let room = max.saturating_sub(used + blocks.len());
    let weights: usize = blocks.iter().map(|b| b.weight).sum::<usize>().max(1);
    let mut parts: Vec<(Option<String>, usize, bool)> = Vec::with_capacity(blocks.len());
    let mut carry = 0;
    let mut spent = 0;
    for block in &blocks {
        let share = room * block.weight / weights + carry;
        let share = share.min(room - spent);
        let text = render(block, share, model);
        let cost = text.as_deref().map_or(0, count);
        let whole = text.as_deref().is_some_and(|t| !t.contains(MORE_MARK));
        carry = share - cost;
        spent += cost;
        parts.push((text, cost, whole));
    }
    // What is still free goes to the sections that were cut, in order.
    for (block, part) in blocks.iter().zip(parts.iter_mut()) {
        if part.2 {
            continue;
        }
        let free = room - spent;
        if free == 0 {
            break;
        }
        if let Some(text) = render(block, part.1 + free, model) {
            let cost = count(&text);
            if cost > part.1 {
                spent += cost - part.1;
                *part = (Some(text), cost, false);
            }
        }
    }
    for text in parts.into_iter().filter_map(|p| p.0) {
        out.push_str(&text);
    }
    // Counts of parts can differ from the count of the whole at the
    // joins: drop last lines until the whole fits.
    while count(&out) > max {
        match out.rfind('\n') {
            Some(cut) => out.truncate(cut),
            None => {
                while count(&out) > max && !out.is_empty() {
                    out.pop();
                }
            }
        }
    }
    out
}

/// Every cut marker contains this.
const MORE_MARK: &str = " more)";

fn marker(omitted: usize, cut: Cut) -> String {
    match cut {
        Cut::Newest => format!("(+{omitted} earlier, not shown{MORE_MARK}"),
        _ => format!("(+{omitted}{MORE_MARK}"),
    }
}

/// The block with as many items as fit in `budget` tokens (with a marker
/// counting the rest), or `None` when not even its title and one item do.
fn render(block: &Block, budget: usize, model: TokenModel) -> Option<String> {
    let count = |s: &str| model.count(s);
    let n = block.items.len();
    let full = assemble(block, &(0..n).collect::<Vec<_>>(), 0);
    if count(&full) <= budget {
        return Some(full);
    }
    // Greedy on item costs, then trimmed until the whole fits.
    let cost = |i: usize| count(&block.items[i].text) + 2;
    let base = count(&assemble(block, &[], 0)) + count(&marker(9999, block.cut)) + 3;
    let order: Vec<usize> = match block.cut {
        Cut::Tail => (0..n).collect(),
        Cut::Newest => (0..n).rev().collect(),
        Cut::Middle => {
            let mut o = vec![0];
            if n > 1 {
                o.push(n - 1);
            }
            o.extend(1..n.saturating_sub(1));
            o
        }
    };
    let mut left = budget.checked_sub(base)?;
    let mut taken = Vec::new();
    for i in order {
        let c = cost(i);
        if c > left {
            break;
        }
        left -= c;
        taken.push(i);
    }
    loop {
        if taken.is_empty() {
            return None;
        }
        let mut sorted = taken.clone();
        sorted.sort_unstable();
        let omitted: usize = (0..n)
            .filter(|i| !sorted.contains(i))
            .map(|i| block.items[i].count)
            .sum();
        let text = assemble(block, &sorted, omitted);
        if count(&text) <= budget {
            return Some(text);
        }
        // Drop the last one taken (in a middle cut, never the first).
        taken.pop();
    }
}

/// The text of `block` with the items `kept` (sorted) and a marker for
/// `omitted` facts.
fn assemble(block: &Block, kept: &[usize], omitted: usize) -> String {
    let mut parts: Vec<String> = Vec::with_capacity(kept.len() + 1);
    let mark = (omitted > 0).then(|| marker(omitted, block.cut));
    if let (Cut::Newest, Some(m)) = (block.cut, &mark) {
        parts.push(m.clone());
    }
    for (pos, &i) in kept.iter().enumerate() {
        parts.push(block.items[i].text.clone());
        let gap = kept.get(pos + 1).is_some_and(|&next| next > i + 1);
        if let (Cut::Middle, true, Some(m)) = (block.cut, gap, &mark) {
            parts.push(m.clone());
        }
    }
    let middle_marked = block.cut == Cut::Middle && kept.windows(2).any(|w| w[1] > w[0] + 1);
    if let (Cut::Tail | Cut::Middle, Some(m), false) = (block.cut, &mark, middle_marked) {
        parts.push(m.clone());
    }
    if block.label {
        format!("\n{}: {}", block.title, parts.join("; "))
    } else {
        let mut s = format!("\n## {}", block.title);
        for p in parts {
            s.push_str("\n- ");
            s.push_str(&p);
        }
        s
    }
}

/// The block's first item cut to fit `budget` (the goal's last resort).
fn shortened(block: &Block, budget: usize, model: TokenModel) -> Option<String> {
    let first = block.items.first()?;
    let mut chars: Vec<char> = first.text.chars().collect();
    while !chars.is_empty() {
        let keep = chars.len() * 3 / 4;
        chars.truncate(keep);
        let mut text: String = chars.iter().collect();
        text.push_str("...");
        let b = Block::new(block.title, vec![Item::one(text)], block.cut, 0);
        let s = assemble(&b, &[0], 0);
        if model.count(&s) <= budget {
            return Some(s);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> TokenModel {
        TokenModel::for_model("gpt-4o")
    }

    fn items(n: usize) -> Vec<Item> {
        (0..n)
            .map(|i| Item::one(format!("item number {i}")))
            .collect()
    }

    #[test]
    fn cuts_are_marked_with_exact_counts() {
        let b = Block::new("Requests", items(40), Cut::Middle, 1);
        let t = render(&b, 60, model()).unwrap();
        assert!(
            t.contains("item number 0\n") && t.contains("item number 39"),
            "{t}"
        );
        let shown = t.matches("item number").count();
        assert!(t.contains(&format!("(+{} more)", 40 - shown)), "{t}");
        let b = Block::new("Files", items(40), Cut::Tail, 1);
        let t = render(&b, 60, model()).unwrap();
        let shown = t.matches("item number").count();
        assert!(t.ends_with(&format!("(+{} more)", 40 - shown)), "{t}");
        assert!(model().count(&t) <= 60);
    }

    #[test]
    fn unused_room_flows_on_and_the_cap_holds() {
        let small = Block::new("A", items(1), Cut::Tail, 10);
        let big = Block::new("B", items(60), Cut::Tail, 1);
        for max in [20, 50, 100, 200, 400] {
            let t = lay_out(
                "Header.",
                None,
                vec![small.clone(), big.clone()],
                max,
                model(),
            );
            assert!(model().count(&t) <= max, "{max}: {t}");
            if max >= 100 {
                // B gets what A leaves: far more than its 1/11 share.
                assert!(t.matches("item number").count() > 10, "{max}: {t}");
            }
        }
    }
}
