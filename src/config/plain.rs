//! A reader of its own for plain TOML, in front of the `toml` crate (`super::parse`).
//!
//! A drop-in call reads its config at every nvcc call, and `toml`'s parser and deserialiser were a quarter of the
//! code such a call runs, for a file of a few lines (docs/benchmarks.md). This reader knows the part of TOML that
//! configs are written in, by Nix and by hand: `key = value` lines with bare keys, `[table]` and `[table.sub]`
//! headers, comments, one-line strings without escapes, `true` and `false`, decimal integers, arrays (over several
//! lines too) and one-line inline tables. On anything else it gives up and says nothing: other syntax, a key or a
//! table written twice, a value the config's types refuse. `toml` then reads the file again and says what is wrong,
//! in its own words. What this reader accepts it must read as `toml` does, each value's line included: the tests
//! hold the two to the same `Config` on the configs the project shows and writes, and on mutations of them.

use std::fmt;
use std::ops::Range;

use serde::de::{self, IntoDeserializer, Visitor};

/// What `text` says, or `None` where this reader gives up (the caller asks `toml`).
pub fn read<'a, T: de::Deserialize<'a>>(text: &'a str) -> Option<T> {
    let root = Parser { text, at: 0, depth: 0 }.document()?;
    T::deserialize(&Value { span: 0..text.len(), kind: Kind::Table(root) }).ok()
}

/// Whether this reader reads `text` (as a config file at `path`); and where it does, it panics unless `toml` reads the
/// same config from it, each value's line included. For the tests and the fuzz target (`crate::fuzzing`).
pub fn checked_against_toml(text: &str, path: &std::path::Path) -> bool {
    let Some(plain) = super::sourced::reading(path, text, || read::<super::Config>(text)) else { return false };
    let toml = super::sourced::reading(path, text, || toml::from_str::<super::Config>(text));
    assert_eq!(Some(&plain), toml.as_ref().ok(), "read here, and by `toml` otherwise: {text:?}");
    true
}

/// Why this reader gave up: never shown, `toml` says it.
#[derive(Debug)]
pub struct GaveUp;

impl fmt::Display for GaveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not read here: left to `toml`")
    }
}

impl std::error::Error for GaveUp {}

impl de::Error for GaveUp {
    // Called with the message a type would show, which nobody reads: nothing is formatted.
    fn custom<T: fmt::Display>(_: T) -> GaveUp {
        GaveUp
    }
}

/// A value and the bytes it was written in.
struct Value<'a> {
    span: Range<usize>,
    kind: Kind<'a>,
}

enum Kind<'a> {
    Str(&'a str),
    Bool(bool),
    Int(i64),
    Array(Vec<Value<'a>>),
    Table(Table<'a>),
}

/// A table's keys, in the order written. `inline`: written as `{ ... }`, so no header may add to it.
#[derive(Default)]
struct Table<'a> {
    entries: Vec<(&'a str, Value<'a>)>,
    inline: bool,
}

impl<'a> Table<'a> {
    /// Add a key; `None` where the table has it already.
    fn insert(&mut self, key: &'a str, value: Value<'a>) -> Option<()> {
        if self.entries.iter().any(|(k, _)| *k == key) {
            return None;
        }
        self.entries.push((key, value));
        Some(())
    }

    /// The table a header's path names below this one; `None` where a key on the way is not a header's table.
    fn at(&mut self, path: &[&'a str]) -> Option<&mut Table<'a>> {
        let mut table = self;
        for key in path {
            let (_, value) = table.entries.iter_mut().find(|(k, _)| k == key)?;
            table = match &mut value.kind {
                Kind::Table(t) if !t.inline => t,
                _ => return None,
            };
        }
        Some(table)
    }

    /// Make the table a header names, and the tables on its way that are not there yet. `None` where it is there
    /// already, written twice or made on an earlier header's way (which TOML allows once: `toml` judges that).
    fn open(&mut self, path: &[&'a str]) -> Option<()> {
        let (last, way) = path.split_last()?;
        let mut table = self;
        for key in way {
            if !table.entries.iter().any(|(k, _)| k == key) {
                table.insert(key, Value { span: 0..0, kind: Kind::Table(Table::default()) })?;
            }
            table = table.at(std::slice::from_ref(key))?;
        }
        table.insert(last, Value { span: 0..0, kind: Kind::Table(Table::default()) })
    }
}

struct Parser<'a> {
    text: &'a str,
    at: usize,
    /// How many arrays and inline tables are open around `at`: past `DEEPEST` the reader gives up, so that no file
    /// runs its recursion off the stack (`toml` then says how deep it may go).
    depth: usize,
}

const DEEPEST: usize = 16;

impl<'a> Parser<'a> {
    /// The whole text as its top-level table.
    fn document(mut self) -> Option<Table<'a>> {
        let mut root = Table::default();
        // Where `key = value` lines go: the last header's path, none before the first.
        let mut current = Vec::new();
        loop {
            self.blanks();
            match self.peek() {
                None => return Some(root),
                Some(b'\n' | b'\r' | b'#') => {}
                Some(b'[') => {
                    current = self.header()?;
                    root.open(&current)?;
                }
                Some(_) => {
                    let (key, value) = self.pair()?;
                    root.at(&current)?.insert(key, value)?;
                }
            }
            self.line_end()?;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek() == Some(byte)).then(|| self.at += 1)
    }

    /// Spaces and tabs.
    fn blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.at += 1;
        }
    }

    /// A comment, up to its line's end. TOML allows no control character in one but the tab.
    fn comment(&mut self) -> Option<()> {
        while let Some(byte) = self.peek() {
            match byte {
                b'\n' | b'\r' => break,
                b'\t' => {}
                0..=0x1f | 0x7f => return None,
                _ => {}
            }
            self.at += 1;
        }
        Some(())
    }

    /// A new line, `\n` or `\r\n`.
    fn newline(&mut self) -> Option<()> {
        if self.eat(b'\r').is_some() {
            return self.eat(b'\n');
        }
        self.eat(b'\n')
    }

    /// The rest of a line: blanks, a comment, and its end or the text's.
    fn line_end(&mut self) -> Option<()> {
        self.blanks();
        if self.peek() == Some(b'#') {
            self.comment()?;
        }
        match self.peek() {
            None => Some(()),
            _ => self.newline(),
        }
    }

    /// What may lie between an array's values: blanks, comments and new lines.
    fn gap(&mut self) -> Option<()> {
        loop {
            self.blanks();
            match self.peek() {
                Some(b'#') => self.comment()?,
                Some(b'\n' | b'\r') => self.newline()?,
                _ => return Some(()),
            }
        }
    }

    /// A bare key: letters, digits, `_` and `-`.
    fn key(&mut self) -> Option<&'a str> {
        let start = self.at;
        while matches!(self.peek(), Some(b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-')) {
            self.at += 1;
        }
        (self.at > start).then(|| &self.text[start..self.at])
    }

    /// `[key]` or `[key.key...]`, with nothing inside the brackets but the keys and their dots.
    fn header(&mut self) -> Option<Vec<&'a str>> {
        self.eat(b'[')?;
        let mut path = vec![self.key()?];
        while self.eat(b'.').is_some() {
            path.push(self.key()?);
        }
        self.eat(b']')?;
        Some(path)
    }

    /// `key = value`.
    fn pair(&mut self) -> Option<(&'a str, Value<'a>)> {
        let key = self.key()?;
        self.blanks();
        self.eat(b'=')?;
        self.blanks();
        Some((key, self.value()?))
    }

    fn value(&mut self) -> Option<Value<'a>> {
        let start = self.at;
        let kind = match self.peek()? {
            quote @ (b'"' | b'\'') => Kind::Str(self.string(quote)?),
            b'[' => Kind::Array(self.nested(Self::array)?),
            b'{' => Kind::Table(self.nested(Self::inline_table)?),
            b't' | b'f' => Kind::Bool(self.boolean()?),
            b'+' | b'-' | b'0'..=b'9' => Kind::Int(self.integer()?),
            _ => return None,
        };
        Some(Value { span: start..self.at, kind })
    }

    /// An array or an inline table, one level deeper.
    fn nested<T>(&mut self, read: fn(&mut Self) -> Option<T>) -> Option<T> {
        if self.depth == DEEPEST {
            return None;
        }
        self.depth += 1;
        let value = read(self);
        self.depth -= 1;
        value
    }

    /// A one-line string without escapes: basic (`"..."`) or literal (`'...'`).
    fn string(&mut self, quote: u8) -> Option<&'a str> {
        self.at += 1;
        let start = self.at;
        loop {
            match self.peek()? {
                byte if byte == quote => break,
                b'\\' if quote == b'"' => return None,
                b'\t' => {}
                0..=0x1f | 0x7f => return None,
                _ => {}
            }
            self.at += 1;
        }
        let text = &self.text[start..self.at];
        self.at += 1;
        // Two quotes and a third open a multi-line string.
        (!text.is_empty() || self.peek() != Some(quote)).then_some(text)
    }

    /// Whether the value just read ends here, as TOML has it: before a blank, a comment, a separator or a line's end.
    fn ended(&self) -> Option<()> {
        matches!(self.peek(), None | Some(b' ' | b'\t' | b'\n' | b'\r' | b'#' | b',' | b']' | b'}')).then_some(())
    }

    fn boolean(&mut self) -> Option<bool> {
        let rest = &self.text[self.at..];
        let value = if rest.starts_with("true") {
            true
        } else if rest.starts_with("false") {
            false
        } else {
            return None;
        };
        self.at += if value { 4 } else { 5 };
        self.ended()?;
        Some(value)
    }

    /// A decimal integer: a sign maybe, and digits with no leading zero. Underscores, other bases, floats and dates
    /// are left to `toml`, as is a number too large.
    fn integer(&mut self) -> Option<i64> {
        let start = self.at;
        if matches!(self.peek(), Some(b'+' | b'-')) {
            self.at += 1;
        }
        let digits = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        let count = self.at - digits;
        if count == 0 || (count > 1 && self.text.as_bytes()[digits] == b'0') {
            return None;
        }
        self.ended()?;
        self.text[start..self.at].parse().ok()
    }

    /// `[value, ...]`, a comma after the last allowed, over as many lines as it takes.
    fn array(&mut self) -> Option<Vec<Value<'a>>> {
        self.at += 1;
        let mut items = Vec::new();
        loop {
            self.gap()?;
            if self.eat(b']').is_some() {
                return Some(items);
            }
            items.push(self.value()?);
            self.gap()?;
            if self.eat(b',').is_none() {
                self.eat(b']')?;
                return Some(items);
            }
        }
    }

    /// `{ key = value, ... }` on one line, with no comma after the last (TOML 1.0's form).
    fn inline_table(&mut self) -> Option<Table<'a>> {
        self.at += 1;
        let mut table = Table { entries: Vec::new(), inline: true };
        self.blanks();
        if self.eat(b'}').is_some() {
            return Some(table);
        }
        loop {
            self.blanks();
            let (key, value) = self.pair()?;
            table.insert(key, value)?;
            self.blanks();
            if self.eat(b'}').is_some() {
                return Some(table);
            }
            self.eat(b',')?;
        }
    }
}

/// A value read into the config's types, as `toml`'s deserialiser does: strings borrowed, `Spanned` (`Sourced`)
/// given the value's bytes, unit enum variants from strings.
impl<'de> de::Deserializer<'de> for &Value<'de> {
    type Error = GaveUp;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, GaveUp> {
        match &self.kind {
            Kind::Str(text) => visitor.visit_borrowed_str(text),
            Kind::Bool(value) => visitor.visit_bool(*value),
            Kind::Int(value) => visitor.visit_i64(*value),
            Kind::Array(items) => {
                let mut seq = de::value::SeqDeserializer::new(items.iter());
                let value = visitor.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(value)
            }
            Kind::Table(table) => {
                let mut map = de::value::MapDeserializer::new(table.entries.iter().map(|(k, v)| (*k, v)));
                let value = visitor.visit_map(&mut map)?;
                map.end()?;
                Ok(value)
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, GaveUp> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value, GaveUp> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, GaveUp> {
        if serde_spanned::de::is_spanned(name) {
            return visitor.visit_map(serde_spanned::de::SpannedDeserializer::new(self, self.span.clone()));
        }
        self.deserialize_any(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, GaveUp> {
        match self.kind {
            Kind::Str(text) => visitor.visit_enum(text.into_deserializer()),
            _ => Err(GaveUp),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf unit unit_struct seq
        tuple tuple_struct map identifier ignored_any
    }
}

impl<'de> IntoDeserializer<'de, GaveUp> for &Value<'de> {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

#[cfg(test)]
mod tests;
