//! Arithmetic and comparison builtins computed in place on numbers.
//!
//! A call of `+ - * < > <= >= = == not= inc dec` with a few arguments,
//! when the name is the builtin (not shadowed by a user definition), is
//! analyzed to an `Expr::Prim` node. Its arguments are evaluated as for
//! any call; when they are all integers and the result needs no more
//! than a machine operation, it is computed here. Floats (one or two
//! operands, at least one of them a float) take a second, out-of-line
//! path here too, computed as the builtins compute them (an integer
//! operand converted to a float; a comparison with NaN false), except
//! `=`/`not=`, whose answer for an integer and a float differs from
//! `==`. Anything else (other types, an integer overflow, three float
//! operands) calls the builtin with the same arguments, so results and
//! errors are exactly the builtin's.

use crate::value::Value;

/// An operation with an inline integer form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PrimOp {
    Add,
    Sub,
    Mul,
    Lt,
    Gt,
    Le,
    Ge,
    /// `=` and `==`: the same on integers.
    Eq,
    NotEq,
    Inc,
    Dec,
}

impl PrimOp {
    /// The operation of the builtin `name` called with `args` arguments,
    /// when that call has an inline integer form.
    pub(crate) fn of_call(name: &str, args: usize) -> Option<PrimOp> {
        let op = match name {
            "+" => PrimOp::Add,
            "-" => PrimOp::Sub,
            "*" => PrimOp::Mul,
            "<" => PrimOp::Lt,
            ">" => PrimOp::Gt,
            "<=" => PrimOp::Le,
            ">=" => PrimOp::Ge,
            "=" | "==" => PrimOp::Eq,
            "not=" => PrimOp::NotEq,
            "inc" => PrimOp::Inc,
            "dec" => PrimOp::Dec,
            _ => return None,
        };
        let fits = match op {
            // Folds from the left, as the builtins do.
            PrimOp::Add | PrimOp::Sub | PrimOp::Mul => (1..=3).contains(&args),
            PrimOp::Inc | PrimOp::Dec => args == 1,
            _ => args == 2,
        };
        fits.then_some(op)
    }

    /// The operation on one integer; `None` to leave it to the builtin.
    #[inline(always)]
    pub(crate) fn int1(self, a: i64) -> Option<i64> {
        match self {
            PrimOp::Add | PrimOp::Mul => Some(a),
            PrimOp::Sub => a.checked_neg(),
            PrimOp::Inc => a.checked_add(1),
            PrimOp::Dec => a.checked_sub(1),
            _ => None,
        }
    }

    /// An arithmetic operation on two integers; `None` on overflow (or
    /// for a comparison).
    #[inline(always)]
    pub(crate) fn arith(self, a: i64, b: i64) -> Option<i64> {
        match self {
            PrimOp::Add => a.checked_add(b),
            PrimOp::Sub => a.checked_sub(b),
            PrimOp::Mul => a.checked_mul(b),
            _ => None,
        }
    }

    /// The operation on three integers, folded from the left as the
    /// builtins fold: `(- a b c)` is `(a - b) - c`; `None` as for
    /// [`PrimOp::arith`].
    #[inline(always)]
    pub(crate) fn arith3(self, a: i64, b: i64, c: i64) -> Option<i64> {
        self.arith(a, b).and_then(|ab| self.arith(ab, c))
    }

    /// A comparison of two integers; `None` for an arithmetic operation.
    #[inline(always)]
    pub(crate) fn compare(self, a: i64, b: i64) -> Option<bool> {
        match self {
            PrimOp::Lt => Some(a < b),
            PrimOp::Gt => Some(a > b),
            PrimOp::Le => Some(a <= b),
            PrimOp::Ge => Some(a >= b),
            PrimOp::Eq => Some(a == b),
            PrimOp::NotEq => Some(a != b),
            _ => None,
        }
    }

    /// The operation on `args` when they are numbers and one of them is
    /// a float (see the module's documentation); `None` to leave it to
    /// the builtin.
    pub(crate) fn on_floats(self, args: &[Value]) -> Option<Value> {
        let float = |v: &Value| match v {
            Value::Float(f) => Some(*f),
            #[allow(clippy::cast_precision_loss)]
            Value::Int(i) => Some(*i as f64),
            _ => None,
        };
        match args {
            [Value::Float(a)] => match self {
                PrimOp::Inc => Some(Value::Float(a + 1.0)),
                PrimOp::Dec => Some(Value::Float(a - 1.0)),
                PrimOp::Sub => Some(Value::Float(-a)),
                _ => None,
            },
            [x, y] if matches!(x, Value::Float(_)) || matches!(y, Value::Float(_)) => {
                let (a, b) = (float(x)?, float(y)?);
                Some(match self {
                    PrimOp::Add => Value::Float(a + b),
                    PrimOp::Sub => Value::Float(a - b),
                    PrimOp::Mul => Value::Float(a * b),
                    PrimOp::Lt => Value::Bool(a < b),
                    PrimOp::Gt => Value::Bool(a > b),
                    PrimOp::Le => Value::Bool(a <= b),
                    PrimOp::Ge => Value::Bool(a >= b),
                    PrimOp::Eq | PrimOp::NotEq | PrimOp::Inc | PrimOp::Dec => return None,
                })
            }
            _ => None,
        }
    }

    /// True for `+`, `-` and `*`, which fold any number of arguments
    /// from the left (not `inc`/`dec`).
    pub(crate) fn is_fold(self) -> bool {
        matches!(self, PrimOp::Add | PrimOp::Sub | PrimOp::Mul)
    }

    /// True for the operations whose two-argument result is a boolean.
    #[inline(always)]
    pub(crate) fn is_comparison(self) -> bool {
        matches!(
            self,
            PrimOp::Lt | PrimOp::Gt | PrimOp::Le | PrimOp::Ge | PrimOp::Eq | PrimOp::NotEq
        )
    }
}

#[cfg(test)]
mod tests {
    use super::PrimOp;

    #[test]
    fn only_the_shapes_with_an_inline_form_are_chosen() {
        assert_eq!(PrimOp::of_call("+", 3), Some(PrimOp::Add));
        assert_eq!(PrimOp::of_call("+", 0), None);
        assert_eq!(PrimOp::of_call("+", 4), None);
        assert_eq!(PrimOp::of_call("<", 3), None);
        assert_eq!(PrimOp::of_call("inc", 2), None);
        assert_eq!(PrimOp::of_call("==", 2), Some(PrimOp::Eq));
        assert_eq!(PrimOp::of_call("max", 2), None);
    }

    #[test]
    fn floats_are_computed_except_equality() {
        use crate::value::{pr_str, Value::*};
        let on = |op: PrimOp, args: &[crate::value::Value]| op.on_floats(args).map(|v| pr_str(&v));
        assert_eq!(
            on(PrimOp::Add, &[Int(1), Float(2.5)]).as_deref(),
            Some("3.5")
        );
        assert_eq!(
            on(PrimOp::Mul, &[Float(1.5), Int(2)]).as_deref(),
            Some("3.0")
        );
        assert_eq!(on(PrimOp::Sub, &[Float(0.5)]).as_deref(), Some("-0.5"));
        assert_eq!(on(PrimOp::Inc, &[Float(1.5)]).as_deref(), Some("2.5"));
        assert_eq!(
            on(PrimOp::Ge, &[Float(3.5), Int(3)]).as_deref(),
            Some("true")
        );
        assert_eq!(
            on(PrimOp::Lt, &[Float(f64::NAN), Int(3)]).as_deref(),
            Some("false")
        );
        // `=` on an integer and a float is not `==`; two integers, a
        // non-number and a one-argument sum are the builtin's.
        assert_eq!(on(PrimOp::Eq, &[Int(1), Float(1.0)]), None);
        assert_eq!(on(PrimOp::NotEq, &[Float(1.0), Float(1.0)]), None);
        assert_eq!(on(PrimOp::Add, &[Int(1), Int(2)]), None);
        assert_eq!(on(PrimOp::Add, &[Float(1.0), Nil]), None);
        assert_eq!(on(PrimOp::Add, &[Float(-0.0)]), None);
    }

    #[test]
    fn overflow_is_left_to_the_builtin() {
        assert_eq!(PrimOp::Add.arith(i64::MAX, 1), None);
        assert_eq!(PrimOp::Mul.arith(i64::MIN, -1), None);
        assert_eq!(PrimOp::Sub.int1(i64::MIN), None);
        assert_eq!(PrimOp::Inc.int1(i64::MAX), None);
        assert_eq!(PrimOp::Dec.int1(i64::MIN), None);
        assert_eq!(PrimOp::Lt.arith(1, 2), None);
        assert_eq!(PrimOp::Add.compare(1, 2), None);
    }
}
