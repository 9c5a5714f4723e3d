//! The running program's meter: its deadline, its interrupt flag, its
//! expansion limit and its memory ceiling, reachable from any code that runs on the program's thread
//! (value comparison, hashing, printing, JSON, builtins) without passing a
//! context through every signature.
//!
//! Long work calls [`work`] as it goes (one unit per node or item, about
//! a nanosecond each); every [`CHECK_EVERY`] units the clock, the
//! interrupt flag and (with a heap counter ([`crate::heap`])) the
//! heap are read. Once the deadline has passed, the flag is set or the
//! heap has grown past the memory limit, the meter *trips*: `work` returns false from then on, so loops
//! stop early and give up their (now meaningless) result, and the
//! evaluator turns the trip into the program's `Timeout` or `Interrupted`
//! error as soon as the builtin returns. Work whose size is the
//! *expanded* size of a value (shared structure counted each time it
//! occurs) measures it first with [`expanded_size`], and fails or trips
//! the meter ([`trip_expanded`]) before allocating.
//!
//! With no meter installed (printing a result after the run, say), every
//! call succeeds.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind};

/// Units of work between two reads of the clock and the interrupt flag:
/// a few microseconds of the cheapest work (a node visit).
pub(crate) const CHECK_EVERY: u32 = 2048;

/// Why the meter stopped the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trip {
    Timeout,
    Interrupted,
    /// An operation would have expanded shared structure past its limit.
    Expanded,
    /// The process's heap grew past the program's memory limit.
    Memory,
    /// A value to print nests deeper than [`crate::value::MAX_PRINT_DEPTH`].
    Depth,
}

/// How many installed meters (on any thread) have tripped. `tripped`,
/// asked after every builtin call, reads this plain global first and
/// the thread-local only when some meter has tripped: the common answer
/// then costs one load instead of a thread-local access.
static TRIPPED_METERS: AtomicUsize = AtomicUsize::new(0);

/// Set the current meter's trip, counting it the first time.
fn set_trip(s: &State, trip: Trip) {
    if s.tripped.get().is_none() {
        TRIPPED_METERS.fetch_add(1, Ordering::Relaxed);
    }
    s.tripped.set(Some(trip));
}

struct State {
    active: Cell<bool>,
    work: Cell<u32>,
    deadline: Cell<Option<Instant>>,
    timeout: Cell<Duration>,
    max_expanded: Cell<usize>,
    max_memory: Cell<usize>,
    /// Heap bytes past which the program stops (`None`: not counted).
    memory_ceiling: Cell<Option<usize>>,
    tripped: Cell<Option<Trip>>,
}

thread_local! {
    static STATE: State = const {
        State {
            active: Cell::new(false),
            work: Cell::new(0),
            deadline: Cell::new(None),
            timeout: Cell::new(Duration::ZERO),
            max_expanded: Cell::new(usize::MAX),
            max_memory: Cell::new(usize::MAX),
            memory_ceiling: Cell::new(None),
            tripped: Cell::new(None),
        }
    };
    /// Apart from `STATE`, which has no destructor and so is reached
    /// without a registration check on every access: `work` and
    /// `tripped` run on hot paths.
    static INTERRUPT: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// The limits a meter enforces.
#[derive(Debug, Clone)]
pub(crate) struct Meter {
    pub started: Instant,
    pub timeout: Duration,
    pub max_expanded: usize,
    pub max_memory: usize,
    pub interrupt: Option<Arc<AtomicBool>>,
}

/// The meter that was installed before, put back when this is dropped
/// (runs nest: an agent used as a tool runs a program inside a program).
#[must_use = "the meter is uninstalled when this guard drops"]
pub(crate) struct Installed {
    previous: Option<Saved>,
}

struct Saved {
    work: u32,
    deadline: Option<Instant>,
    timeout: Duration,
    max_expanded: usize,
    max_memory: usize,
    memory_ceiling: Option<usize>,
    tripped: Option<Trip>,
    interrupt: Option<Arc<AtomicBool>>,
}

impl Meter {
    /// Make this the meter of the current thread until the guard drops.
    pub(crate) fn install(&self) -> Installed {
        STATE.with(|s| {
            let previous = s.active.get().then(|| Saved {
                work: s.work.get(),
                deadline: s.deadline.get(),
                timeout: s.timeout.get(),
                max_expanded: s.max_expanded.get(),
                max_memory: s.max_memory.get(),
                memory_ceiling: s.memory_ceiling.get(),
                tripped: s.tripped.get(),
                interrupt: INTERRUPT.with(|i| i.borrow().clone()),
            });
            s.active.set(true);
            s.work.set(0);
            s.deadline.set(self.started.checked_add(self.timeout));
            s.timeout.set(self.timeout);
            s.max_expanded.set(self.max_expanded);
            s.max_memory.set(self.max_memory);
            s.memory_ceiling
                .set(crate::heap::live_bytes().map(|live| live.saturating_add(self.max_memory)));
            s.tripped.set(None);
            INTERRUPT.with(|i| *i.borrow_mut() = self.interrupt.clone());
            Installed { previous }
        })
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        STATE.with(|s| {
            if s.tripped.get().is_some() {
                TRIPPED_METERS.fetch_sub(1, Ordering::Relaxed);
            }
        });
        STATE.with(|s| match self.previous.take() {
            Some(p) => {
                s.work.set(p.work);
                s.deadline.set(p.deadline);
                s.timeout.set(p.timeout);
                s.max_expanded.set(p.max_expanded);
                s.max_memory.set(p.max_memory);
                s.memory_ceiling.set(p.memory_ceiling);
                s.tripped.set(p.tripped);
                INTERRUPT.with(|i| *i.borrow_mut() = p.interrupt);
            }
            None => {
                s.active.set(false);
                s.tripped.set(None);
                INTERRUPT.with(|i| *i.borrow_mut() = None);
            }
        })
    }
}

/// Count `units` of work; false once the program must stop (the caller
/// returns early with any result: it will be replaced by the error).
#[inline]
pub(crate) fn work(units: u32) -> bool {
    STATE.with(|s| {
        if !s.active.get() {
            return true;
        }
        if s.tripped.get().is_some() {
            return false;
        }
        let done = s.work.get().saturating_add(units);
        if done < CHECK_EVERY {
            s.work.set(done);
            return true;
        }
        s.work.set(0);
        check_now(s)
    })
}

/// `iter`, ending early once the program must stop (one unit of work
/// per item): for builtins whose loops grow with their input, whose
/// partial result the meter's error then replaces.
#[inline]
pub(crate) fn metered<I: Iterator>(iter: I) -> impl Iterator<Item = I::Item> {
    iter.take_while(|_| work(1))
}

#[cold]
fn check_now(s: &State) -> bool {
    let trip = if s.deadline.get().is_some_and(|d| Instant::now() >= d) {
        Some(Trip::Timeout)
    } else if INTERRUPT.with(|i| {
        i.borrow()
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
    }) {
        Some(Trip::Interrupted)
    } else if s
        .memory_ceiling
        .get()
        .is_some_and(|ceiling| crate::heap::live_bytes().is_some_and(|live| live > ceiling))
    {
        Some(Trip::Memory)
    } else {
        None
    };
    if let Some(trip) = trip {
        set_trip(s, trip);
    }
    trip.is_none()
}

/// Read the clock, the interrupt flag and the heap now (the evaluator
/// calls this every so many steps); false once the meter has tripped.
pub(crate) fn check() -> bool {
    STATE.with(|s| {
        if !s.active.get() {
            return true;
        }
        if s.tripped.get().is_some() {
            return false;
        }
        s.work.set(0);
        check_now(s)
    })
}

/// The expansion limit in force (`None` with no meter).
pub(crate) fn max_expanded() -> Option<usize> {
    STATE.with(|s| s.active.get().then(|| s.max_expanded.get()))
}

/// Trip the meter: an operation would expand shared structure past the
/// expansion limit.
pub(crate) fn trip_expanded() {
    STATE.with(|s| {
        if s.active.get() && s.tripped.get().is_none() {
            set_trip(s, Trip::Expanded);
        }
    })
}

/// True once the meter has tripped.
#[inline]
pub(crate) fn tripped() -> bool {
    TRIPPED_METERS.load(Ordering::Relaxed) > 0 && STATE.with(|s| s.tripped.get().is_some())
}

/// The error of a tripped meter, if it tripped.
pub(crate) fn error() -> Option<Error> {
    STATE.with(|s| {
        s.tripped.get().map(|trip| {
            trip_error(
                trip,
                s.timeout.get(),
                s.max_expanded.get(),
                s.max_memory.get(),
            )
        })
    })
}

/// The error each trip stands for; the messages name the limit.
pub(crate) fn trip_error(
    trip: Trip,
    timeout: Duration,
    max_expanded: usize,
    max_memory: usize,
) -> Error {
    match trip {
        Trip::Timeout => Error::new(
            ErrorKind::Timeout,
            format!(
                "Program exceeded the time limit of {} ms",
                timeout.as_millis()
            ),
        ),
        Trip::Interrupted => Error::new(ErrorKind::Interrupted, "Evaluation interrupted"),
        Trip::Expanded => expanded_error(max_expanded),
        Trip::Memory => Error::new(
            ErrorKind::MemoryLimit,
            format!(
                "{HEAP_LIMIT_PREFIX} {} MiB of memory (the memory limit)",
                max_memory >> 20
            ),
        )
        .with_hint("build smaller intermediate collections, or process the data in parts"),
        Trip::Depth => Error::new(
            ErrorKind::DepthLimit,
            format!(
                "A value nested more than {} levels deep cannot be printed",
                crate::value::MAX_PRINT_DEPTH
            ),
        ),
    }
}

/// Trip the meter: a value to print nests too deep.
pub(crate) fn trip_depth() {
    STATE.with(|s| {
        if s.active.get() && s.tripped.get().is_none() {
            set_trip(s, Trip::Depth);
        }
    })
}

/// How the error of a heap over the memory limit begins (a session tells
/// it from the size limit's memory errors by this).
pub(crate) const HEAP_LIMIT_PREFIX: &str = "Program used more than";

/// An expansion over its limit (`max_expanded`).
pub(crate) fn expanded_error(max_expanded: usize) -> Error {
    Error::new(
        ErrorKind::MemoryLimit,
        format!(
            "The operation would expand its input to more than {max_expanded} items (the expansion limit)"
        ),
    )
    .with_hint("values that share structure can be far larger than they look; process less at once")
}

/// Count the leaves and nodes a walk over `v` would visit, giving up (and
/// returning `None`) once the count passes `limit` or the meter trips.
/// Shared structure is counted as often as it occurs, which is what an
/// expanding operation (flatten, walk, JSON) would build.
pub(crate) fn expanded_size(v: &crate::value::Value, limit: usize) -> Option<usize> {
    use crate::value::Value;
    fn go(v: &Value, left: &mut usize) -> bool {
        if *left == 0 || !work(1) {
            return false;
        }
        *left -= 1;
        match v {
            Value::Vector(items) | Value::List(items) => {
                crate::value::deep(|| items.iter().all(|i| go(i, left)))
            }
            Value::Set(items) => crate::value::deep(|| items.iter().all(|i| go(i, left))),
            Value::Map(m) => {
                crate::value::deep(|| m.iter().all(|(k, v)| go(k, left) && go(v, left)))
            }
            Value::Reduced(inner) => go(inner, left),
            _ => true,
        }
    }
    let budget = limit.saturating_add(1);
    let mut left = budget;
    go(v, &mut left).then_some(budget - left)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_meter_everything_passes() {
        assert!(work(u32::MAX));
        trip_expanded();
        assert!(error().is_none());
    }

    #[test]
    fn a_passed_deadline_trips_within_one_check() {
        let meter = Meter {
            started: Instant::now() - Duration::from_secs(1),
            timeout: Duration::from_millis(10),
            max_expanded: 100,
            max_memory: usize::MAX,
            interrupt: None,
        };
        let _on = meter.install();
        let mut n = 0u32;
        while work(1) {
            n += 1;
        }
        assert!(n <= CHECK_EVERY);
        assert_eq!(error().unwrap().kind(), ErrorKind::Timeout);
    }

    #[test]
    fn nested_meters_restore_the_outer_one() {
        let outer = Meter {
            started: Instant::now(),
            timeout: Duration::from_secs(60),
            max_expanded: 10,
            max_memory: usize::MAX,
            interrupt: None,
        };
        let _outer = outer.install();
        {
            let inner = Meter {
                max_expanded: 1000,
                ..outer.clone()
            };
            let _inner = inner.install();
            trip_expanded();
            assert!(tripped());
        }
        assert!(!tripped(), "the inner trip stays inside");
        assert_eq!(max_expanded(), Some(10));
        trip_expanded();
        assert_eq!(error().unwrap().kind(), ErrorKind::MemoryLimit);
    }

    #[test]
    fn the_interrupt_flag_trips() {
        let flag = Arc::new(AtomicBool::new(false));
        let meter = Meter {
            started: Instant::now(),
            timeout: Duration::from_secs(60),
            max_expanded: 10,
            max_memory: usize::MAX,
            interrupt: Some(flag.clone()),
        };
        let _on = meter.install();
        assert!(work(1));
        flag.store(true, Ordering::Relaxed);
        assert!(!work(CHECK_EVERY));
        assert_eq!(error().unwrap().kind(), ErrorKind::Interrupted);
    }
}
