//! A counting-only byte-pair encoder over prebuilt rank tables, giving
//! tiktoken's exact counts with a load of a few milliseconds.
//!
//! tiktoken-rs parses a base64 text file into hash maps of owned byte
//! vectors (and a sorted copy, and a decoder) on every load: about
//! 750 million instructions for `o200k_base`. Counting needs only the
//! rank of a byte string, so the tables here are the tokens' bytes in
//! rank order (`src/tokens/data/*.bin`, written by
//! `tests/tokens/make_tables.py` from the same rank files), embedded in
//! the binary; loading builds one open-addressing index of `u32` slots
//! over them and compiles the encoding's split pattern. The split and the
//! merge order are tiktoken's: the same pattern with the same regex
//! engine, then repeatedly the lowest-ranked adjacent pair (the leftmost
//! of equal ranks). Property tests compare every count with tiktoken-rs.

/// One encoding's ranks, split pattern and index.
pub(crate) struct Bpe {
    /// The tokens' bytes, concatenated in rank order.
    bytes: &'static [u8],
    /// Where token `r` starts in `bytes`; one more entry for the end.
    starts: Vec<u32>,
    /// Open addressing: `rank + 1` of the token hashed there, 0 if free.
    slots: Vec<u32>,
    mask: usize,
    split: fancy_regex_tok::Regex,
}

const MAGIC: &[u8] = b"PTCBPE1\n";

/// Above this many bytes a piece is merged with a heap instead of by
/// scanning for the lowest rank (both give the same merges).
const SCAN_LIMIT: usize = 128;

fn hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        h = (h.rotate_left(23) ^ w).wrapping_mul(K);
    }
    let mut tail = 0u64;
    for (i, b) in chunks.remainder().iter().enumerate() {
        tail |= (*b as u64) << (8 * i);
    }
    h = (h.rotate_left(23) ^ tail).wrapping_mul(K);
    h ^ (h >> 29)
}

impl Bpe {
    /// Build the index over a table in the `PTCBPE1` format and compile
    /// `pattern`. None if the table is malformed or the pattern invalid.
    pub(crate) fn new(table: &'static [u8], pattern: &str) -> Option<Bpe> {
        // The pattern compiles (about half the load) on a second thread
        // while this one builds the index.
        std::thread::scope(|scope| {
            let split = std::thread::Builder::new()
                .name("ptc-token-pattern".into())
                .spawn_scoped(scope, || fancy_regex_tok::Regex::new(pattern).ok());
            let index = Index::new(table);
            let split = match split {
                Ok(handle) => handle.join().ok().flatten(),
                Err(_) => fancy_regex_tok::Regex::new(pattern).ok(),
            }?;
            let Index {
                bytes,
                starts,
                slots,
                mask,
            } = index?;
            Some(Bpe {
                bytes,
                starts,
                slots,
                mask,
                split,
            })
        })
    }

    /// The number of tokens in the table.
    pub(crate) fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// The bytes of token `rank`.
    pub(crate) fn token(&self, rank: u32) -> Option<&'static [u8]> {
        let r = rank as usize;
        let (s, e) = (*self.starts.get(r)?, *self.starts.get(r + 1)?);
        let bytes: &'static [u8] = self.bytes;
        Some(&bytes[s as usize..e as usize])
    }

    /// The rank of `piece`, if it is a token.
    #[inline]
    fn rank(&self, piece: &[u8]) -> Option<u32> {
        let mut i = hash(piece) as usize & self.mask;
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                return None;
            }
            let r = (slot - 1) as usize;
            let (s, e) = (self.starts[r] as usize, self.starts[r + 1] as usize);
            if &self.bytes[s..e] == piece {
                return Some(r as u32);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Tokens of `text`, special-token text counted as ordinary text.
    pub(crate) fn count(&self, text: &str) -> usize {
        let mut n = 0;
        for piece in self.split.find_iter(text) {
            let Ok(piece) = piece else {
                // The engine's backtrack limit: count what is left by bytes
                // rather than fail (tiktoken-rs would panic here).
                return n + text.len().div_ceil(4);
            };
            let piece = piece.as_str().as_bytes();
            n += if self.rank(piece).is_some() {
                1
            } else if piece.len() <= SCAN_LIMIT {
                self.merge_scan(piece)
            } else {
                self.merge_heap(piece)
            };
        }
        n
    }

    fn pair_rank(&self, piece: &[u8], from: usize, to: usize) -> u32 {
        self.rank(&piece[from..to]).unwrap_or(u32::MAX)
    }

    /// Number of tokens of `piece` (not itself a token): segments start
    /// as single bytes; the adjacent pair of lowest rank (leftmost among
    /// equals) is merged until no pair is a token.
    fn merge_scan(&self, piece: &[u8]) -> usize {
        // bounds[j] is where segment j starts; the last entry is the end.
        let mut bounds: Vec<usize> = (0..=piece.len()).collect();
        // ranks[j]: rank of segments j and j+1 joined.
        let mut ranks: Vec<u32> = (0..piece.len().saturating_sub(1))
            .map(|j| self.pair_rank(piece, j, j + 2))
            .collect();
        loop {
            let mut best = (u32::MAX, 0);
            for (j, &r) in ranks.iter().enumerate() {
                if r < best.0 {
                    best = (r, j);
                }
            }
            if best.0 == u32::MAX {
                break;
            }
            let j = best.1;
            bounds.remove(j + 1);
            ranks.remove(j);
            if j < ranks.len() {
                ranks[j] = self.pair_rank(piece, bounds[j], bounds[j + 2]);
            }
            if j > 0 {
                ranks[j - 1] = self.pair_rank(piece, bounds[j - 1], bounds[j + 1]);
            }
        }
        bounds.len() - 1
    }

    /// [`Bpe::merge_scan`] with a heap of candidate merges and a linked
    /// list of segments, for long pieces (whitespace runs, long words).
    fn merge_heap(&self, piece: &[u8]) -> usize {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let len = piece.len();
        // Segment starting at byte i: its end, its predecessor's start,
        // and whether it is still a segment start.
        let mut end: Vec<usize> = (1..=len).collect();
        let mut prev: Vec<usize> = (0..len).map(|i| i.wrapping_sub(1)).collect();
        let mut alive = vec![true; len];
        let mut heap = BinaryHeap::with_capacity(len);
        for i in 0..len - 1 {
            let r = self.pair_rank(piece, i, i + 2);
            if r != u32::MAX {
                heap.push(Reverse((r, i, i + 2)));
            }
        }
        let mut segments = len;
        while let Some(Reverse((_, start, stop))) = heap.pop() {
            // Stale unless `start` still begins a segment whose right
            // neighbour ends at `stop`.
            if !alive[start] {
                continue;
            }
            let right = end[start];
            if right >= len || end[right] != stop {
                continue;
            }
            alive[right] = false;
            end[start] = stop;
            if stop < len {
                prev[stop] = start;
            }
            segments -= 1;
            if stop < len {
                let r = self.pair_rank(piece, start, end[stop]);
                if r != u32::MAX {
                    heap.push(Reverse((r, start, end[stop])));
                }
            }
            let p = prev[start];
            if p != usize::MAX {
                let r = self.pair_rank(piece, p, stop);
                if r != u32::MAX {
                    heap.push(Reverse((r, p, stop)));
                }
            }
        }
        segments
    }
}

/// The tables of a [`Bpe`] without its pattern.
struct Index {
    bytes: &'static [u8],
    starts: Vec<u32>,
    slots: Vec<u32>,
    mask: usize,
}

impl Index {
    /// Read a table in the `PTCBPE1` format; None if it is malformed.
    fn new(table: &'static [u8]) -> Option<Index> {
        let rest = table.strip_prefix(MAGIC)?;
        let n = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?) as usize;
        let lengths = rest.get(4..4 + n)?;
        let bytes = rest.get(4 + n..)?;
        let mut starts = Vec::with_capacity(n + 1);
        let mut at = 0u32;
        for &len in lengths {
            starts.push(at);
            at += len as u32;
        }
        starts.push(at);
        if at as usize != bytes.len() {
            return None;
        }
        let size = (n * 2).next_power_of_two().max(16);
        let mask = size - 1;
        let mut slots = vec![0u32; size];
        for rank in 0..n {
            let token = &bytes[starts[rank] as usize..starts[rank + 1] as usize];
            let mut i = hash(token) as usize & mask;
            while slots[i] != 0 {
                i = (i + 1) & mask;
            }
            slots[i] = rank as u32 + 1;
        }
        Some(Index {
            bytes,
            starts,
            slots,
            mask,
        })
    }
}

/// The split pattern of `cl100k_base` (tiktoken's, as tiktoken-rs has it).
pub(crate) const CL100K_PATTERN: &str = "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s";

/// The embedded `o200k_base` table.
pub(crate) const O200K_TABLE: &[u8] = include_bytes!("data/o200k_base.bin");
/// The embedded `cl100k_base` table.
pub(crate) const CL100K_TABLE: &[u8] = include_bytes!("data/cl100k_base.bin");
