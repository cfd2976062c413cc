//! One server entry merged into an MCP host's JSON configuration as a splice of the file's
//! text: the entry's value is replaced, or a member is added after the last one, and every
//! other byte of the file stays as it was (the other servers, the other keys, the whitespace
//! between them). The file is read as ordered members whose values are slices of it
//! ([`RawValue`]), so nothing else is parsed into a map and written back.

use std::fmt;

use serde::Serialize;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::ser::PrettyFormatter;
use serde_json::value::RawValue;

/// The file with the entry in it.
#[derive(Debug)]
pub(super) struct Merged {
    /// The whole new text of the file.
    pub(super) text: String,
    /// Whether an entry of that name was there (and is replaced).
    pub(super) replaced: bool,
    /// How many other servers the file names.
    pub(super) others: usize,
}

/// Why a file is left as it is.
#[derive(Debug)]
pub(super) enum MergeError {
    /// It is not JSON; serde_json's message names the line and column.
    Syntax(serde_json::Error),
    /// Its JSON is not an object (the kind it is).
    NotAnObject(&'static str),
    /// Its servers key (named) holds something else than an object (the kind it holds).
    ServersNotAnObject(String, &'static str),
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MergeError::Syntax(e) => write!(f, "not valid JSON ({e})"),
            MergeError::NotAnObject(kind) => write!(f, "not a JSON object but {kind}"),
            MergeError::ServersNotAnObject(key, kind) => {
                write!(f, "its `{key}` is not a JSON object but {kind}")
            }
        }
    }
}

/// Merges `entry` into `file` (the text of a configuration file, empty when there is none)
/// as the server `name` of the object under the top-level `key`.
pub(super) fn merge<T: Serialize>(
    file: &str,
    key: &str,
    name: &str,
    entry: &T,
) -> Result<Merged, MergeError> {
    // A byte-order mark (some Windows editors write one) is kept, and not parsed.
    let body = file.strip_prefix('\u{feff}').unwrap_or(file);
    let bom = &file[..file.len() - body.len()];
    let newline = if file.contains("\r\n") { "\r\n" } else { "\n" };
    if body.trim().is_empty() {
        let style = Style::Lines {
            unit: "  ",
            newline,
        };
        let servers = |base: &str| object_text(name, |b| write_value(entry, style, b), style, base);
        let text = object_text(key, servers, style, "")?;
        return Ok(Merged {
            text: format!("{bom}{text}{newline}"),
            replaced: false,
            others: 0,
        });
    }
    let root: &RawValue = serde_json::from_str(body).map_err(MergeError::Syntax)?;
    let root = Object::read(root.get()).ok_or(MergeError::NotAnObject(kind(root.get())))??;
    let unit = root.unit();
    let servers_at = root.members.iter().rposition(|m| m.key == key);
    let (start, end, replacement, replaced, others) = match servers_at {
        Some(i) => {
            let raw = root.members[i].value.get();
            let servers = Object::read(raw)
                .ok_or_else(|| MergeError::ServersNotAnObject(key.to_owned(), kind(raw)))??;
            let (style, base) = root.layout(file, i, unit, newline);
            let found = servers.members.iter().rposition(|m| m.key == name);
            let others = servers.members.iter().filter(|m| m.key != name).count();
            match (found, servers.members.len()) {
                (Some(j), _) => {
                    let (style, base) = servers.layout(file, j, unit, newline);
                    let value = servers.members[j].value.get();
                    let start = offset(file, value);
                    let text = write_value(entry, style, base)?;
                    (start, start + value.len(), text, true, others)
                }
                (None, 0) => {
                    let start = offset(file, raw);
                    let text = object_text(name, |b| write_value(entry, style, b), style, base)?;
                    (start, start + raw.len(), text, false, 0)
                }
                (None, n) => {
                    let (style, base) = servers.layout(file, n - 1, unit, newline);
                    let lead = servers.lead(file, n - 1);
                    let end = servers.end(file, n - 1);
                    let value = write_value(entry, style, base)?;
                    let text = member_text(lead, name, &value, style)?;
                    (end, end, text, false, others)
                }
            }
        }
        None if root.members.is_empty() => {
            let style = Style::Lines { unit, newline };
            let servers =
                |base: &str| object_text(name, |b| write_value(entry, style, b), style, base);
            let start = offset(file, root.text);
            let text = object_text(key, servers, style, "")?;
            (start, start + root.text.len(), text, false, 0)
        }
        None => {
            let last = root.members.len() - 1;
            let (style, base) = root.layout(file, last, unit, newline);
            let servers = object_text(name, |b| write_value(entry, style, b), style, base)?;
            let end = root.end(file, last);
            let text = member_text(root.lead(file, last), key, &servers, style)?;
            (end, end, text, false, 0)
        }
    };
    Ok(Merged {
        text: format!("{}{replacement}{}", &file[..start], &file[end..]),
        replaced,
        others,
    })
}

/// How new text is laid out where it goes: one member a line (indented by `unit` a level,
/// lines ending in `newline`), or all on one line.
#[derive(Clone, Copy)]
enum Style<'a> {
    Lines { unit: &'a str, newline: &'a str },
    Compact,
}

/// One member of a JSON object as the file writes it.
struct Member<'a> {
    /// The key, unescaped.
    key: String,
    /// The value: its text is a slice of the file.
    value: &'a RawValue,
}

/// A JSON object of the file: its text (a slice of the file, `{` to `}`) and its members in
/// the file's order, duplicates included.
struct Object<'a> {
    text: &'a str,
    members: Vec<Member<'a>>,
}

impl<'a> Object<'a> {
    /// The object `text` is, or `None` if it is another kind of JSON value.
    fn read(text: &'a str) -> Option<Result<Object<'a>, MergeError>> {
        if !text.starts_with('{') {
            return None;
        }
        Some(
            serde_json::from_str::<Members<'a>>(text)
                .map(|Members(members)| Object { text, members })
                .map_err(MergeError::Syntax),
        )
    }

    /// The whitespace before the key of member `i`, after the comma that separates it from
    /// the one before: `"\n    "` in a file of one member a line, `""` or `" "` on one line.
    fn lead<'f>(&self, file: &'f str, i: usize) -> &'f str {
        let from = match i {
            0 => offset(file, self.text) + 1,
            _ => self.end(file, i - 1),
        };
        let between = &file[from..offset(file, self.members[i].value.get())];
        let lead = &between[..between.find('"').unwrap_or(between.len())];
        lead.rsplit_once(',').map_or(lead, |(_, after)| after)
    }

    /// Where the value of member `i` ends in the file.
    fn end(&self, file: &str, i: usize) -> usize {
        let value = self.members[i].value.get();
        offset(file, value) + value.len()
    }

    /// How member `i` is laid out, and the indentation of its line.
    fn layout<'f>(
        &self,
        file: &'f str,
        i: usize,
        unit: &'f str,
        newline: &'f str,
    ) -> (Style<'f>, &'f str) {
        match self.lead(file, i).rsplit_once('\n') {
            Some((_, indent)) => (Style::Lines { unit, newline }, indent),
            None => (Style::Compact, ""),
        }
    }

    /// The indentation of one level: that of the first member when it is on a line of its
    /// own, else two spaces.
    fn unit(&self) -> &'a str {
        let Some(first) = self.members.first() else {
            return "  ";
        };
        let between = &self.text[1..offset(self.text, first.value.get())];
        let lead = &between[..between.find('"').unwrap_or(0)];
        match lead.rsplit_once('\n') {
            Some((_, indent)) if !indent.is_empty() && indent.trim().is_empty() => indent,
            _ => "  ",
        }
    }
}

/// The members of a JSON object in the file's order, each value borrowed from the text.
struct Members<'a>(Vec<Member<'a>>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MembersVisitor;

        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut members = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, &'de RawValue>()? {
                    members.push(Member { key, value });
                }
                Ok(Members(members))
            }
        }

        deserializer.deserialize_map(MembersVisitor)
    }
}

/// Where `part`, a slice of `file`, starts in it.
fn offset(file: &str, part: &str) -> usize {
    part.as_ptr() as usize - file.as_ptr() as usize
}

/// What kind of JSON value `text` is, for messages.
fn kind(text: &str) -> &'static str {
    match text.as_bytes().first() {
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

/// `value` written in `style`, its lines after the first indented by `base`.
fn write_value<T: Serialize>(
    value: &T,
    style: Style<'_>,
    base: &str,
) -> Result<String, MergeError> {
    match style {
        Style::Compact => serde_json::to_string(value).map_err(MergeError::Syntax),
        Style::Lines { unit, newline } => {
            let mut out = Vec::new();
            let formatter = PrettyFormatter::with_indent(unit.as_bytes());
            let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
            value
                .serialize(&mut serializer)
                .map_err(MergeError::Syntax)?;
            let text = String::from_utf8_lossy(&out);
            Ok(text.replace('\n', &format!("{newline}{base}")))
        }
    }
}

/// `{"key": value}` in `style`, its opening brace on a line indented by `base`; `value` is
/// written for the indentation of its own line.
fn object_text(
    key: &str,
    value: impl FnOnce(&str) -> Result<String, MergeError>,
    style: Style<'_>,
    base: &str,
) -> Result<String, MergeError> {
    let key = serde_json::to_string(key).map_err(MergeError::Syntax)?;
    Ok(match style {
        Style::Lines { unit, newline } => {
            let inner = format!("{base}{unit}");
            let value = value(&inner)?;
            format!("{{{newline}{inner}{key}: {value}{newline}{base}}}")
        }
        Style::Compact => format!("{{{key}:{}}}", value("")?),
    })
}

/// `,<lead>"key": value`: a member added after the last one, its key preceded by the same
/// whitespace as the last one's.
fn member_text(lead: &str, key: &str, value: &str, style: Style<'_>) -> Result<String, MergeError> {
    let key = serde_json::to_string(key).map_err(MergeError::Syntax)?;
    let colon = match style {
        Style::Compact if lead.is_empty() => ":",
        _ => ": ",
    };
    Ok(format!(",{lead}{key}{colon}{value}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn entry() -> Value {
        json!({ "command": "/bin/calc", "args": ["--x"] })
    }

    fn merged(file: &str, key: &str, name: &str) -> Merged {
        merge(file, key, name, &entry()).unwrap_or_else(|e| panic!("{e}: {file}"))
    }

    #[test]
    fn a_new_file_holds_the_entry_alone() {
        let m = merged("", "mcpServers", "calc");
        assert_eq!(
            m.text,
            "{\n  \"mcpServers\": {\n    \"calc\": {\n      \"args\": [\n        \"--x\"\n      ],\n      \"command\": \"/bin/calc\"\n    }\n  }\n}\n"
        );
        assert!(!m.replaced);
        assert_eq!(m.others, 0);
        let value: Value = serde_json::from_str(&m.text).expect("JSON");
        assert_eq!(value["mcpServers"]["calc"], entry());
    }

    #[test]
    fn the_entry_is_added_after_the_others_and_nothing_else_moves() {
        let file = "{\n\t\"z\": 1.50e3,\n\t\"mcpServers\": {\n\t\t\"b\": {\"command\": \"b\"},\n\t\t\"a\": { \"command\":\"a\" }\n\t},\n\t\"k\": [1,2]\n}";
        let m = merged(file, "mcpServers", "calc");
        let added = ",\n\t\t\"calc\": {\n\t\t\t\"args\": [\n\t\t\t\t\"--x\"\n\t\t\t],\n\t\t\t\"command\": \"/bin/calc\"\n\t\t}";
        let at = file.find("\"command\":\"a\" }").expect("a") + "\"command\":\"a\" }".len();
        assert_eq!(m.text, format!("{}{added}{}", &file[..at], &file[at..]));
        assert!(!m.replaced);
        assert_eq!(m.others, 2);
    }

    #[test]
    fn an_entry_of_the_same_name_is_replaced_in_place() {
        let file = "{\"mcpServers\": {\n    \"calc\": {\"command\": \"old\"},\n    \"b\": 2\n  }, \"x\": null}\n";
        let m = merged(file, "mcpServers", "calc");
        assert!(m.replaced);
        assert_eq!(m.others, 1);
        assert_eq!(
            m.text,
            "{\"mcpServers\": {\n    \"calc\": {\n      \"args\": [\n        \"--x\"\n      ],\n      \"command\": \"/bin/calc\"\n    },\n    \"b\": 2\n  }, \"x\": null}\n"
        );
    }

    #[test]
    fn a_file_on_one_line_stays_on_one_line() {
        let m = merged(r#"{"a":1,"servers":{"b":{}}}"#, "servers", "calc");
        assert_eq!(
            m.text,
            r#"{"a":1,"servers":{"b":{},"calc":{"args":["--x"],"command":"/bin/calc"}}}"#
        );
        let m = merged(r#"{"a": 1}"#, "servers", "c");
        assert_eq!(
            m.text,
            r#"{"a": 1,"servers":{"c":{"args":["--x"],"command":"/bin/calc"}}}"#
        );
    }

    #[test]
    fn a_missing_or_empty_servers_object_is_made() {
        let m = merged("{\r\n  \"theme\": \"dark\"\r\n}\r\n", "mcpServers", "c");
        assert_eq!(
            m.text,
            "{\r\n  \"theme\": \"dark\",\r\n  \"mcpServers\": {\r\n    \"c\": {\r\n      \"args\": [\r\n        \"--x\"\r\n      ],\r\n      \"command\": \"/bin/calc\"\r\n    }\r\n  }\r\n}\r\n"
        );
        let m = merged("{\n  \"servers\": {},\n  \"inputs\": []\n}", "servers", "c");
        let value: Value = serde_json::from_str(&m.text).expect("JSON");
        assert_eq!(value["servers"]["c"], entry());
        assert_eq!(value["inputs"], json!([]));
        assert!(
            m.text
                .starts_with("{\n  \"servers\": {\n    \"c\": {\n      \"args\"")
        );
        let m = merged("\u{feff}{}", "servers", "c");
        assert!(
            m.text
                .starts_with("\u{feff}{\n  \"servers\": {\n    \"c\": {")
        );
    }

    #[test]
    fn names_are_compared_unescaped_and_written_escaped() {
        let file = r#"{"mcpServers": {"a\"b": 1, "\u0063": 2}}"#;
        let m = merged(file, "mcpServers", "c");
        assert!(m.replaced);
        assert_eq!(
            m.text,
            r#"{"mcpServers": {"a\"b": 1, "\u0063": {"args":["--x"],"command":"/bin/calc"}}}"#
        );
        let m = merged(file, "mcpServers", "x\"y");
        assert!(
            m.text
                .ends_with(r#", "x\"y": {"args":["--x"],"command":"/bin/calc"}}}"#)
        );
    }

    #[test]
    fn what_is_not_a_configuration_is_refused() {
        let error = |file: &str| {
            merge(file, "mcpServers", "c", &entry())
                .expect_err(file)
                .to_string()
        };
        let broken = error("{\n  \"mcpServers\": {\n    \"a\": 1,\n  }\n}");
        assert!(broken.starts_with("not valid JSON"), "{broken}");
        assert!(broken.contains("line 4 column 3"), "{broken}");
        assert_eq!(error("[1]"), "not a JSON object but an array");
        assert_eq!(
            error(r#"{"mcpServers": [1]}"#),
            "its `mcpServers` is not a JSON object but an array"
        );
        assert_eq!(
            error(r#"{"mcpServers": null}"#),
            "its `mcpServers` is not a JSON object but null"
        );
        assert!(error("{} x").starts_with("not valid JSON"));
    }
}
