//! JSON straight into values, in one pass: no intermediate
//! `serde_json::Value` tree, object keys interned per load (a key repeated
//! in ten thousand objects is one allocation), integers exact, and the
//! sandbox's size limit applied while reading, so an oversized array,
//! object or string is an error naming its path before the rest is read.
//!
//! Reads JSON text ([`read_json_object`], for `--data` files) or an
//! already parsed `serde_json::Value` ([`from_json_checked`], for
//! embedders), through the same visitor. Text goes first through a faster
//! direct reader ([`fast`]) that builds the same values; the visitor reads
//! it only when that one gives up (bad text, a broken limit), to report
//! the problem.

use std::collections::HashMap;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use std::sync::Arc;

use super::map::Shape;
use super::{ArcStr, Map, Value};
use crate::error::{Error, ErrorKind};

mod chunked;
mod fast;

pub use chunked::read_json_object_chunked;

/// Why a JSON document could not become values.
#[derive(Debug)]
pub enum ReadError {
    /// Not JSON (the message has the line and column).
    Syntax(String),
    /// JSON, but its top level is not an object.
    NotAnObject(String),
    /// Valid JSON that breaks a rule of ours: a size limit, an integer
    /// beyond 64 bits, a top level that is not an object.
    Rule(Error),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Syntax(m) | ReadError::NotAnObject(m) => f.write_str(m),
            ReadError::Rule(e) => write!(f, "{} ({})", e.message(), e.code()),
        }
    }
}

/// Read a JSON object whose keys become `prefix` names (`data/`): its
/// fields in document order. Arrays, objects and strings longer than
/// `max_items` (items, keys or characters) are errors naming their path
/// (`data/orders[3].items`).
pub fn read_json_object(
    bytes: &[u8],
    prefix: &str,
    max_items: usize,
) -> Result<Vec<(String, Value)>, ReadError> {
    // Checking the text is UTF-8 once, up front, spares the parsers a
    // check per string; invalid text is still read from the bytes so the
    // error names its line and column.
    let text = std::str::from_utf8(bytes).ok();
    if let Some(text) = text {
        if let Some(fields) = fast::read_fields(&mut Reader::new(prefix, max_items), text) {
            return Ok(fields);
        }
    }
    // Not well-formed, or over a limit: serde's parser reads it again and
    // says what is wrong, and where.
    let mut reader = Reader::new(prefix, max_items);
    reader.text = Some(bytes);
    match text {
        Some(text) => read_fields(&mut reader, serde_json::Deserializer::from_str(text)),
        None => read_fields(&mut reader, serde_json::Deserializer::from_slice(bytes)),
    }
}

/// Read the top-level object's fields with `de`.
fn read_fields<'de, R: serde_json::de::Read<'de>>(
    reader: &mut Reader<'_>,
    mut de: serde_json::Deserializer<R>,
) -> Result<Vec<(String, Value)>, ReadError> {
    let fields = TopLevel(reader).deserialize(&mut de);
    let fields = match fields {
        Ok(f) => de.end().map(|()| f),
        Err(e) => Err(e),
    };
    fields.map_err(|e| match reader.error(&e) {
        ReadError::Syntax(m) if e.is_data() => ReadError::NotAnObject(m),
        other => other,
    })
}

/// The fields of a parsed JSON object, checked as [`read_json_object`]
/// checks text (except that an integer literal past 64 bits, already a
/// float in `json`, stays a float).
pub fn from_json_checked(
    json: &serde_json::Value,
    prefix: &str,
    max_items: usize,
) -> Result<Vec<(String, Value)>, ReadError> {
    let mut reader = Reader::new(prefix, max_items);
    TopLevel(&mut reader)
        .deserialize(json)
        .map_err(|e| match reader.error(e) {
            ReadError::Syntax(m) => ReadError::NotAnObject(m),
            other => other,
        })
}

/// The state of one load: interned keys, the limit, and, after a rule
/// was broken, the rule and the path to the value that broke it.
struct Reader<'t> {
    /// The JSON text, when reading text: to tell a huge integer literal
    /// from a float (the parser gives both as `f64`).
    text: Option<&'t [u8]>,
    /// The values of the integer literals beyond 64 bits in `text`, found
    /// on the first float that could be one.
    huge_integers: Option<Vec<f64>>,
    /// The interned keys, by [`KeyId`].
    key_names: Vec<ArcStr>,
    /// Each key as it is written in JSON text, quotes included, when it
    /// needs no escape (then its text is its name): by [`KeyId`].
    quoted_keys: Vec<Option<Box<[u8]>>>,
    /// By nesting depth, the keys of the object the direct reader read
    /// last at that depth: the next one there (its sibling in an array,
    /// usually) is expected to repeat them. Only objects at its depth
    /// write it, and an object being read changes its own only for the
    /// other template (below) that has the same keys as far as it has
    /// read, so the keys it stands for stay the object's.
    templates: Vec<Template>,
    /// At each depth, the template before the current one when it had
    /// other keys: objects of two kinds often alternate at one depth (an
    /// order's address and its items; tickets with and without two
    /// optional fields), and an object that leaves the template may
    /// follow this one, which then takes its place.
    other_templates: Vec<Template>,
    keys: HashMap<Box<str>, KeyId, rustc_hash::FxBuildHasher>,
    /// The key last seen at each position of an object (the first
    /// [`SHAPE_POSITIONS`]).
    by_position: Vec<KeyId>,
    /// Recently read short strings, by [`short_string_hash`]: a direct-mapped
    /// cache, so a load keeps at most [`STRING_SLOTS`] of them alive.
    strings: Vec<StringSlot>,
    /// Key lists of recent objects, shared by the objects that repeat them.
    shapes: Vec<(KeyIds, Arc<Shape>)>,
    /// The values of the objects being read, innermost last: an object
    /// gathers its values here, above those of the objects around it,
    /// and they move from here into its map's one allocation.
    field_values: Vec<Value>,
    /// The items of the small arrays being read, innermost last, after a
    /// placeholder: an array gathers its items here while it is small, so
    /// it is allocated once at its exact length instead of grown and then
    /// shrunk (see `fast::Scan::array`).
    array_items: Vec<Value>,
    prefix: String,
    max_items: usize,
    broken: Option<Broken>,
}

struct Broken {
    /// The message, with `{path}` where the path goes.
    message: String,
    kind: ErrorKind,
    /// Path segments, innermost first (pushed as the error unwinds).
    path: Vec<Segment>,
}

enum Segment {
    Key(ArcStr),
    Index(usize),
}

impl<'t> Reader<'t> {
    fn new(prefix: &str, max_items: usize) -> Reader<'t> {
        Reader {
            text: None,
            huge_integers: None,
            key_names: Vec::new(),
            quoted_keys: Vec::new(),
            templates: Vec::new(),
            other_templates: Vec::new(),
            keys: HashMap::default(),
            by_position: Vec::new(),
            strings: vec![StringSlot::default(); STRING_SLOTS],
            shapes: Vec::new(),
            field_values: Vec::new(),
            // A placeholder first (see `fast::take_above`).
            array_items: vec![Value::Nil],
            prefix: prefix.to_string(),
            max_items,
            broken: None,
        }
    }

    /// The interned key `k`, found at `position` in its object. Objects
    /// of one shape (the items of an array, usually) repeat their keys
    /// in order, so the key last seen at the same position is tried
    /// before the table.
    /// Keys are handled by number while an object is read, so that
    /// reading one costs no reference counting.
    fn key(&mut self, position: usize, k: &str) -> KeyId {
        if let Some(&last) = self.by_position.get(position) {
            if self.key_names[last as usize].as_str() == k {
                return last;
            }
        }
        let id = match self.keys.get(k) {
            Some(&id) => id,
            None => {
                let id = KeyId::try_from(self.key_names.len()).expect("fewer keys than the text");
                self.key_names.push(super::keyword::intern(k));
                self.quoted_keys.push(quoted_key(k));
                self.keys.insert(k.into(), id);
                id
            }
        };
        if position < self.by_position.len() {
            self.by_position[position] = id;
        } else if position == self.by_position.len() && position < SHAPE_POSITIONS {
            self.by_position.push(id);
        }
        id
    }

    /// The keys of the template of `depth` (none before an object was
    /// read there).
    #[inline]
    fn template_keys(&self, depth: usize) -> &[KeyId] {
        self.templates.get(depth).map_or(&[], |t| &t.keys[..])
    }

    /// The length of the quoted key the template of `depth` expects at
    /// `position`, when `rest` (the text at an object key) starts with
    /// it.
    #[inline]
    fn expected_key(&self, depth: usize, position: usize, rest: &[u8]) -> Option<usize> {
        let id = *self.templates.get(depth)?.keys.get(position)?;
        let quoted = self.quoted_keys[id as usize].as_deref()?;
        starts_with_short(rest, quoted).then_some(quoted.len())
    }

    /// [`Reader::expected_key`] when the template of `depth` expects
    /// another key at `position`: the key of the depth's other template,
    /// if that one begins with the same keys as the template up to
    /// `position` (the keys read so far). It then becomes the template.
    #[inline(never)]
    fn expected_key_of_other(
        &mut self,
        depth: usize,
        position: usize,
        rest: &[u8],
    ) -> Option<usize> {
        let other = self.other_templates.get_mut(depth)?;
        let template = &mut self.templates[depth];
        let id = *other.keys.get(position)?;
        if other.keys[..position] != *template.keys.get(..position)? {
            return None;
        }
        let quoted = self.quoted_keys[id as usize].as_deref()?;
        starts_with_short(rest, quoted).then_some(())?;
        std::mem::swap(template, other);
        Some(quoted.len())
    }

    /// The map of an object the direct reader read at `depth`;
    /// `as_template` says whether its keys are that depth's template's,
    /// each in its place. Its keys become the template.
    #[inline]
    fn finish_object(&mut self, depth: usize, mut fields: Fields, as_template: bool) -> Value {
        let len = fields.len(self);
        if depth >= self.templates.len() {
            self.templates.resize_with(depth + 1, Template::default);
            self.other_templates
                .resize_with(depth + 1, Template::default);
        }
        let template = &self.templates[depth];
        if as_template {
            if len == template.keys.len() {
                if let Some(shape) = &template.shape {
                    let values = self.field_values.drain(fields.start..);
                    return Value::map(Map::from_shape(shape.clone(), values));
                }
            }
            fields.leave_template(&template.keys, len);
        }
        let map = self.map_of(&fields.keys, fields.start);
        let made = Template {
            keys: fields.keys,
            shape: map.shape().cloned(),
        };
        let template = &mut self.templates[depth];
        if made.keys == template.keys {
            // Keys too many to share (no shape), read again.
            *template = made;
        } else {
            self.other_templates[depth] = std::mem::replace(template, made);
        }
        Value::map(map)
    }

    /// The interned name of key `id`, as a keyword.
    fn keyword(&self, id: KeyId) -> Value {
        Value::Keyword(self.key_names[id as usize].clone())
    }

    /// The map of an object's distinct `keys` and their values, the
    /// field values from `start` on (taken off that stack): small objects
    /// share the key list of earlier objects with the same keys in the
    /// same order (most objects of an array).
    fn map_of(&mut self, keys: &[KeyId], start: usize) -> Map {
        if keys.is_empty() || keys.len() > SHAPED_KEYS {
            let names = &self.key_names;
            let keywords = keys
                .iter()
                .map(|&k| Value::Keyword(names[k as usize].clone()));
            let entries = keywords.zip(self.field_values.drain(start..)).collect();
            return Map::from_distinct(entries);
        }
        let shape = match self.shapes.iter().rposition(|(ids, _)| ids[..] == *keys) {
            Some(i) => self.shapes[i].1.clone(),
            None => {
                let shape = Shape::new(keys.iter().map(|&k| self.keyword(k)).collect());
                if self.shapes.len() == SHAPES_KEPT {
                    self.shapes.remove(0);
                }
                self.shapes.push((KeyIds::from_slice(keys), shape.clone()));
                shape
            }
        };
        Map::from_shape(shape, self.field_values.drain(start..))
    }

    /// Record a broken rule; the returned error unwinds the parse.
    fn break_rule<E: serde::de::Error>(&mut self, kind: ErrorKind, message: String) -> E {
        self.broken = Some(Broken {
            message,
            kind,
            path: Vec::new(),
        });
        E::custom("a rule of the sandbox was broken")
    }

    /// As an error unwinds through a container, note where it was.
    fn unwinding(&mut self, segment: Segment) {
        if let Some(b) = &mut self.broken {
            b.path.push(segment);
        }
    }

    fn over_limit<E: serde::de::Error>(&mut self, what: &str, unit: &str) -> E {
        let max = self.max_items;
        self.break_rule(
            ErrorKind::MemoryLimit,
            format!(
                "`{{path}}` is {what} of more than {max} {unit}, over the limit of {max} items \
                 or characters in one value (max_collection)"
            ),
        )
    }

    fn error(&mut self, e: impl fmt::Display) -> ReadError {
        let Some(broken) = self.broken.take() else {
            return ReadError::Syntax(e.to_string());
        };
        let mut path = self.prefix.clone();
        for (i, segment) in broken.path.iter().rev().enumerate() {
            match segment {
                Segment::Key(k) if i == 0 => path.push_str(k),
                Segment::Key(k) => {
                    path.push('.');
                    path.push_str(k);
                }
                Segment::Index(n) => path.push_str(&format!("[{n}]")),
            }
        }
        ReadError::Rule(Error::new(
            broken.kind,
            broken.message.replace("{path}", &path),
        ))
    }

    /// Whether `f` is the value of an integer literal (no fraction, no
    /// exponent) in the text too long for 64 bits.
    fn is_huge_integer(&mut self, f: f64) -> bool {
        let Some(text) = self.text else {
            return false;
        };
        self.huge_integers
            .get_or_insert_with(|| huge_integer_literals(text))
            .contains(&f)
    }

    fn string<E: serde::de::Error>(&mut self, s: &str) -> Result<Value, E> {
        if self.too_long(s) {
            return Err(self.over_limit("a string", "characters"));
        }
        Ok(self.shared_string(s))
    }

    /// Whether `s` has more characters than the limit allows.
    fn too_long(&self, s: &str) -> bool {
        // Bytes bound characters from above: count only long strings.
        s.len() > self.max_items && s.chars().count() > self.max_items
    }

    /// `s` as a value: inside the value when it is short, else shared
    /// with an equal string of a few more bytes read before it.
    #[inline]
    fn shared_string(&mut self, s: &str) -> Value {
        match crate::value::ShortStr::new(s) {
            Some(short) => Value::ShortStr(short),
            None => Value::Str(self.long_string(s)),
        }
    }

    /// [`Reader::shared_string`] of a string too long to be kept inside a
    /// value (returned as its pointer, in a register).
    #[inline(never)]
    fn long_string(&mut self, s: &str) -> ArcStr {
        if s.len() > SHARED_STRING_BYTES {
            return ArcStr::from(s);
        }
        // Short strings often repeat (a status, a category, a tag): one
        // allocation is shared by the repeats that land in the same slot.
        let hash = short_string_hash(s);
        let slot = &mut self.strings[string_slot(hash)];
        if slot.hash == hash {
            if let Some(shared) = &slot.shared {
                if shared.as_str() == s {
                    return shared.clone();
                }
            }
        }
        let fresh = ArcStr::from(s);
        // A string takes a slot that is free, or one it found taken once
        // before: a run of distinct strings (names, ids) leaves the slots'
        // strings alone, neither read nor released.
        if slot.shared.is_none() || slot.missed == hash {
            slot.hash = hash;
            slot.shared = Some(fresh.clone());
        } else {
            slot.missed = hash;
        }
        fresh
    }
}

/// A slot of the short-string cache ([`Reader::strings`]).
#[derive(Clone, Default)]
struct StringSlot {
    /// The hash of `shared`'s text.
    hash: u64,
    shared: Option<ArcStr>,
    /// The hash of the last string that found another one here.
    missed: u64,
}

/// Whether `text` starts with `prefix`: a quoted key, usually short, so
/// one of 4 to 16 bytes is compared as two overlapping words (inline)
/// instead of through `memcmp`.
#[inline(always)]
fn starts_with_short(text: &[u8], prefix: &[u8]) -> bool {
    let n = prefix.len();
    let Some(text) = text.get(..n) else {
        return false;
    };
    let word8 = |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().expect("8"));
    let word4 = |s: &[u8], at: usize| u32::from_le_bytes(s[at..at + 4].try_into().expect("4"));
    match n {
        8..=16 => word8(text, 0) == word8(prefix, 0) && word8(text, n - 8) == word8(prefix, n - 8),
        4..=7 => word4(text, 0) == word4(prefix, 0) && word4(text, n - 4) == word4(prefix, n - 4),
        _ => text == prefix,
    }
}

/// `k` as JSON text writes it, quotes included, when it needs no escape.
fn quoted_key(k: &str) -> Option<Box<[u8]>> {
    if k.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        return None;
    }
    let mut quoted = Vec::with_capacity(k.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(k.as_bytes());
    quoted.push(b'"');
    Some(quoted.into_boxed_slice())
}

/// Strings up to this many bytes are shared through [`Reader::strings`].
const SHARED_STRING_BYTES: usize = 24;
/// Slots of the short-string cache (a power of two).
const STRING_SLOTS: usize = 512;

/// The cache slot of a short string's hash: from its high half.
fn string_slot(hash: u64) -> usize {
    (hash >> 32) as usize & (STRING_SLOTS - 1)
}

/// The hash of a short string ([`string_slot`] picks its cache slot): a
/// multiplicative hash of its bytes.
fn short_string_hash(s: &str) -> u64 {
    let mut h: u64 = s.len() as u64;
    for chunk in s.as_bytes().chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        h = (h ^ u64::from_le_bytes(word)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    h
}

/// The fields of the top-level object as they are read: a repeated key
/// keeps its first position and its last value.
#[derive(Default)]
struct TopFields {
    fields: Vec<(String, Value)>,
    index: HashMap<String, usize>,
}

impl TopFields {
    fn set(&mut self, key: String, value: Value) {
        match self.index.get(&key) {
            Some(&i) => self.fields[i].1 = value,
            None => {
                self.index.insert(key.clone(), self.fields.len());
                self.fields.push((key, value));
            }
        }
    }

    fn into_fields(self) -> Vec<(String, Value)> {
        self.fields
    }
}

/// The top level: an object, read into fields.
struct TopLevel<'a, 't>(&'a mut Reader<'t>);

impl<'de> DeserializeSeed<'de> for TopLevel<'_, '_> {
    type Value = Vec<(String, Value)>;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TopLevel<'_, '_> {
    type Value = Vec<(String, Value)>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object (its keys become names)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let reader = self.0;
        let mut fields = TopFields::default();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let key = key.into_owned();
            let value = match map.next_value_seed(Node(reader)) {
                Ok(v) => v,
                Err(e) => {
                    reader.unwinding(Segment::Key(ArcStr::from(key.as_str())));
                    return Err(e);
                }
            };
            fields.set(key, value);
        }
        Ok(fields.into_fields())
    }
}

/// Any value below the top level.
struct Node<'a, 't>(&'a mut Reader<'t>);

impl<'de> DeserializeSeed<'de> for Node<'_, '_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_, '_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Nil)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Nil)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Int(n))
    }

    fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Value, E> {
        match i64::try_from(n) {
            Ok(n) => Ok(Value::Int(n)),
            Err(_) => Err(self.0.break_rule(
                ErrorKind::Type,
                format!(
                    "`{{path}}` is the integer {n}, beyond the 64-bit integers \
                     (-9223372036854775808 to 9223372036854775807); write it as a string \
                     or a float to keep it"
                ),
            )),
        }
    }

    fn visit_f64<E: serde::de::Error>(self, f: f64) -> Result<Value, E> {
        // An integer literal past u64 arrives as a float; so does `1e20`.
        if f.fract() == 0.0 && f.abs() >= 9.2e18 && self.0.is_huge_integer(f) {
            return Err(self.0.break_rule(
                ErrorKind::Type,
                "`{path}` is an integer beyond the 64-bit integers \
                 (-9223372036854775808 to 9223372036854775807); write it as a string \
                 or a float to keep it"
                    .to_string(),
            ));
        }
        Ok(Value::Float(f))
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Value, E> {
        self.0.string(s)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let reader = self.0;
        let max = reader.max_items;
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(max).min(4096));
        loop {
            let index = items.len();
            match seq.next_element_seed(Node(reader)) {
                Ok(Some(v)) => {
                    if index == max {
                        return Err(reader.over_limit("an array", "items"));
                    }
                    items.push(v);
                }
                Ok(None) => break,
                Err(e) => {
                    reader.unwinding(Segment::Index(index));
                    return Err(e);
                }
            }
        }
        Ok(Value::vector(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let reader = self.0;
        let mut fields = Fields::new(reader);
        loop {
            let position = fields.len(reader);
            let Some(key) = map.next_key_seed(Key { reader, position })? else {
                break;
            };
            let value = match map.next_value_seed(Node(reader)) {
                Ok(v) => v,
                Err(e) => {
                    let name = reader.key_names[key as usize].clone();
                    reader.unwinding(Segment::Key(name));
                    return Err(e);
                }
            };
            if !fields.add(reader, key, value) {
                return Err(reader.over_limit("an object", "keys"));
            }
        }
        Ok(fields.into_value(reader))
    }
}

/// An object's key, interned as it is read (borrowed from the text when
/// it has no escapes, so no string is allocated for it).
struct Key<'a, 't> {
    reader: &'a mut Reader<'t>,
    position: usize,
}

impl<'de> DeserializeSeed<'de> for Key<'_, '_> {
    type Value = KeyId;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<KeyId, D::Error> {
        de.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key<'_, '_> {
    type Value = KeyId;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E>(self, k: &str) -> Result<KeyId, E> {
        Ok(self.reader.key(self.position, k))
    }
}

/// The values of the integer literals of JSON `text` beyond the 64-bit
/// integers (outside strings; no fraction or exponent). serde hands such a
/// literal over as a float: a negative one from 19 digits on (below
/// -9223372036854775808), a positive one from 21 digits on (past
/// `u64::MAX`; the 20-digit ones arrive as `u64`).
pub(crate) fn huge_integer_literals(text: &[u8]) -> Vec<f64> {
    fn fits_i64(literal: &[u8]) -> bool {
        std::str::from_utf8(literal)
            .ok()
            .is_some_and(|s| s.parse::<i64>().is_ok())
    }
    let mut found = Vec::new();
    let mut in_string = false;
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_string = true;
            i += 1;
            continue;
        }
        if b == b'-' || b.is_ascii_digit() {
            let start = i;
            i += 1;
            while i < text.len() && text[i].is_ascii_digit() {
                i += 1;
            }
            let literal = &text[start..i];
            let digits = literal.len() - usize::from(literal[0] == b'-');
            let plain = !matches!(text.get(i), Some(b'.' | b'e' | b'E'));
            if plain && digits >= 19 && !fits_i64(literal) {
                if let Some(f) = std::str::from_utf8(literal)
                    .ok()
                    .and_then(|s| s.parse().ok())
                {
                    found.push(f);
                }
            }
            // Skip the rest of a number (fraction, exponent).
            while i < text.len()
                && matches!(text[i], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-')
            {
                i += 1;
            }
            continue;
        }
        i += 1;
    }
    found
}

/// Object positions whose last key is remembered.
const SHAPE_POSITIONS: usize = 32;

/// Up to this many keys, a repeated key is found by a scan; past it, by
/// an index of the keys' addresses.
const SCAN_LIMIT: usize = 16;

/// The fields of an object being read: its distinct keys in order, where
/// its values start on the reader's stack of field values, and, past
/// [`SCAN_LIMIT`] keys, an index of the keys.
///
/// While the direct reader finds the keys of its depth's template in
/// order ([`Fields::has_room`]), `keys` stays empty: they are the
/// template's first keys, as many as the values, copied only if the
/// object leaves the template ([`Fields::leave_template`]).
struct Fields {
    keys: KeyIds,
    start: usize,
    index: rustc_hash::FxHashMap<KeyId, usize>,
}

impl Fields {
    #[inline]
    fn new(reader: &Reader<'_>) -> Fields {
        Fields {
            keys: KeyIds::new(),
            start: reader.field_values.len(),
            index: rustc_hash::FxHashMap::default(),
        }
    }

    /// The number of distinct keys so far.
    #[inline]
    fn len(&self, reader: &Reader<'_>) -> usize {
        reader.field_values.len() - self.start
    }

    /// The `len` keys so far are the first ones of `template`: write them
    /// down, for the fields that do not follow it.
    #[inline(never)]
    fn leave_template(&mut self, template: &[KeyId], len: usize) {
        self.keys = KeyIds::from_slice(&template[..len]);
    }

    /// Whether a field with a new key (from the template) keeps within
    /// the reader's limit; its value then goes straight onto the stack.
    #[inline(always)]
    fn has_room(&self, reader: &Reader<'_>) -> bool {
        self.len(reader) < reader.max_items
    }

    /// Add a field: a repeated key keeps its first position and its last
    /// value. False, adding nothing, when a new key would be one more than
    /// the reader's limit.
    #[inline(always)]
    fn add(&mut self, reader: &mut Reader<'_>, key: KeyId, value: Value) -> bool {
        let repeated = if self.index.is_empty() {
            self.keys.iter().position(|&k| k == key)
        } else {
            self.index.get(&key).copied()
        };
        match repeated {
            Some(i) => reader.field_values[self.start + i] = value,
            None if self.keys.len() == reader.max_items => return false,
            None => {
                if !self.index.is_empty() || self.keys.len() == SCAN_LIMIT {
                    if self.index.is_empty() {
                        for (i, &k) in self.keys.iter().enumerate() {
                            self.index.insert(k, i);
                        }
                    }
                    self.index.insert(key, self.keys.len());
                }
                self.keys.push(key);
                reader.field_values.push(value);
            }
        }
        true
    }

    /// The object's map.
    #[inline]
    fn into_value(self, reader: &mut Reader<'_>) -> Value {
        Value::map(reader.map_of(&self.keys, self.start))
    }
}

/// The keys of the object read last at some depth, and their shape when
/// that object was shaped.
#[derive(Default)]
struct Template {
    keys: KeyIds,
    shape: Option<Arc<Shape>>,
}

/// A key of the load, by number: its place in [`Reader::key_names`].
type KeyId = u32;
/// The keys of one object, in order.
type KeyIds = smallvec::SmallVec<[KeyId; SHAPED_KEYS]>;

/// Objects with at most this many keys share their key list ([`Shape`]).
const SHAPED_KEYS: usize = super::map::SHAPED_LIMIT;
/// Shapes a load remembers; the oldest is forgotten first.
const SHAPES_KEPT: usize = 32;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_prefixes_compare_as_slices_do() {
        let text = b"\"category\": 1, \"id\": 2, \"abcdefghijklmnopq\": 3";
        for n in 0..=20 {
            for start in 0..text.len() {
                let prefix = &text[start..(start + n).min(text.len())];
                for at in 0..text.len() {
                    let rest = &text[at..];
                    assert_eq!(
                        starts_with_short(rest, prefix),
                        rest.starts_with(prefix),
                        "{:?} at {at}",
                        String::from_utf8_lossy(prefix)
                    );
                }
            }
        }
        // One byte off at either end, in the middle, and past the end.
        for (rest, prefix, same) in [
            (&b"\"price\":"[..], &b"\"price\""[..], true),
            (b"\"prica\":", b"\"price\"", false),
            (b"xprice\":", b"\"price\"", false),
            (b"\"pr", b"\"price\"", false),
            (b"\"abcdefghijk\"", b"\"abcdefXhijk\"", false),
        ] {
            assert_eq!(starts_with_short(rest, prefix), same);
        }
    }

    fn read(text: &str, max: usize) -> Result<Vec<(String, Value)>, String> {
        read_json_object(text.as_bytes(), "data/", max).map_err(|e| e.to_string())
    }

    #[test]
    fn values_arrive_as_from_json_builds_them() {
        let text = r#"{"a": [1, -2, 3.5, "x", true, null, {"k": {"k": 1}}], "b": {"c": []}}"#;
        let json: serde_json::Value = serde_json::from_str(text).unwrap();
        let fields = read(text, 100).unwrap();
        let expected: Vec<(String, Value)> = json
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), super::super::from_json(v)))
            .collect();
        assert_eq!(fields, expected);
        assert_eq!(from_json_checked(&json, "data/", 100).unwrap(), expected);
    }

    #[test]
    fn escaped_keys_and_text_that_is_not_utf8() {
        let fields = read(r#"{"a\u0062": [{"x\ny": 1}]}"#, 100).unwrap();
        assert_eq!(fields[0].0, "ab");
        // A key that is no keyword name prints as the call making it.
        assert_eq!(
            super::super::pr_str(&fields[0].1),
            "[{(keyword \"x\\ny\") 1}]"
        );
        let bad = read_json_object(b"{\"a\": \"\xff\"}", "data/", 100).unwrap_err();
        assert!(
            matches!(&bad, ReadError::Syntax(m) if m.contains("line 1")),
            "{bad}"
        );
    }

    #[test]
    fn short_strings_are_inline_and_repeated_longer_ones_share_one_allocation() {
        let fields = read(r#"{"xs": ["awaiting payment", "closed", "awaiting payment", "a long string that is not shared", "a long string that is not shared"]}"#, 100).unwrap();
        let Value::Vector(xs) = &fields[0].1 else {
            panic!()
        };
        let text = |i: usize| match &xs[i] {
            Value::Str(s) => s.clone(),
            other => panic!("{other:?}"),
        };
        assert!(ArcStr::ptr_eq(&text(0), &text(2)));
        assert!(matches!(&xs[1], Value::ShortStr(s) if s.as_str() == "closed"));
        assert!(!ArcStr::ptr_eq(&text(3), &text(4)));
        assert_eq!(text(3), text(4));
    }

    #[test]
    fn a_string_that_repeats_takes_its_slot_from_one_that_did_not() {
        // More distinct strings than slots, so some land where another is.
        let distinct: Vec<String> = (0..2 * STRING_SLOTS)
            .map(|i| format!("distinct string {i}"))
            .collect();
        let mut reader = Reader::new("data/", 100);
        for s in &distinct {
            reader.shared_string(s);
        }
        // A string whose slot holds another, that another missed since.
        let elsewhere = |s: &str| {
            let hash = short_string_hash(s);
            let slot = &reader.strings[string_slot(hash)];
            slot.hash != hash && slot.missed != hash
        };
        let repeated = distinct.iter().find(|s| elsewhere(s)).unwrap().clone();
        // Read again, it is noted; the next time it takes the slot, and
        // later reads share it.
        let mut read = || match &reader.shared_string(&repeated) {
            Value::Str(s) => s.clone(),
            other => panic!("{other:?}"),
        };
        let (first, second, third) = (read(), read(), read());
        assert!(!ArcStr::ptr_eq(&first, &second));
        assert!(ArcStr::ptr_eq(&second, &third));
        assert_eq!(first, third);
    }

    #[test]
    fn repeated_keys_are_one_allocation() {
        let fields = read(r#"{"xs": [{"price": 1}, {"price": 2}]}"#, 100).unwrap();
        let Value::Vector(xs) = &fields[0].1 else {
            panic!()
        };
        let key = |v: &Value| match v {
            Value::Map(m) => match m.keys().next() {
                Some(Value::Keyword(k)) => k.clone(),
                _ => panic!(),
            },
            _ => panic!(),
        };
        assert!(ArcStr::ptr_eq(&key(&xs[0]), &key(&xs[1])));
    }

    #[test]
    fn sizes_are_checked_while_reading_with_the_path() {
        let e = read(r#"{"orders": [{"items": [1, 2, 3, 4]}]}"#, 3).unwrap_err();
        assert!(
            e.contains("`data/orders[0].items` is an array of more than 3 items"),
            "{e}"
        );
        assert!(e.contains("(memory-exceeded)"), "{e}");
        let e = read(r#"{"m": {"a": 1, "b": 2, "c": 3, "d": 4}}"#, 3).unwrap_err();
        assert!(
            e.contains("`data/m` is an object of more than 3 keys"),
            "{e}"
        );
        let e = read(r#"{"s": ["ok", "long"]}"#, 3).unwrap_err();
        assert!(
            e.contains("`data/s[1]` is a string of more than 3 characters"),
            "{e}"
        );
        // Multi-byte characters count as one.
        assert!(read(r#"{"s": "ééé"}"#, 3).is_ok());
    }

    #[test]
    fn wide_objects_with_repeated_keys() {
        let mut text = String::from("{\"m\": {");
        for i in 0..1000 {
            text.push_str(&format!("\"k{i}\": {i}, "));
        }
        text.push_str("\"k3\": -3, \"k999\": -999}}");
        let fields = read(&text, 10_000).unwrap();
        let Value::Map(m) = &fields[0].1 else {
            panic!()
        };
        assert_eq!(m.len(), 1000);
        assert_eq!(m.get(&Value::keyword("k3")), Some(&Value::Int(-3)));
        assert_eq!(m.get(&Value::keyword("k999")), Some(&Value::Int(-999)));
        assert_eq!(m.get(&Value::keyword("k500")), Some(&Value::Int(500)));
    }

    #[test]
    fn integers_are_exact_or_an_error() {
        let fields = read(
            r#"{"n": 9223372036854775807, "m": -9223372036854775808}"#,
            10,
        )
        .unwrap();
        assert_eq!(fields[0].1, Value::Int(i64::MAX));
        assert_eq!(fields[1].1, Value::Int(i64::MIN));
        let e = read(r#"{"ids": [1, 18446744073709551615]}"#, 10).unwrap_err();
        assert!(
            e.contains("`data/ids[1]` is the integer 18446744073709551615"),
            "{e}"
        );
    }

    #[test]
    fn the_top_level_must_be_an_object() {
        let e = read("[1, 2]", 10).unwrap_err();
        assert!(e.contains("a JSON object"), "{e}");
        let e = read("{\"a\": 1", 10).unwrap_err();
        assert!(e.contains("line 1"), "{e}");
        let e = read("{\"a\": 1} x", 10).unwrap_err();
        assert!(e.contains("trailing"), "{e}");
    }

    #[test]
    fn a_repeated_top_level_key_keeps_its_first_place_and_last_value() {
        let fields = read(r#"{"a": 1, "b": 2, "a": 3}"#, 10).unwrap();
        assert_eq!(
            fields,
            vec![("a".into(), Value::Int(3)), ("b".into(), Value::Int(2))]
        );
    }
}
