//! A short text for the model in place of the JSON copy of structured content
//! ([`Summarized`]): from the value's `Display` ([`Json::summarized`]), from a closure
//! ([`Json::with_summary`]), or from `#[tool(summary = …)]`, whose template's fields are read
//! from the value's JSON ([`Summarize`]).
//!
//! The structured content and the output schema are those of `Json<T>`. A client of a
//! protocol version without structured content gets the JSON text instead of the summary, so
//! it still gets the data (`ToolResult::summarized`).

use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde_json::Value;

use super::{Content, IntoToolError, IntoToolResult, Json, ToolResult};
use crate::tool::definition::def::{generator, resolve_ref};
use crate::tool::result::structured::Structured;

/// Structured output with a short text for the model instead of the full JSON copy: `T`
/// becomes `structuredContent` and `T`'s schema the tool's `outputSchema`, exactly as with
/// [`Json<T>`], and the one text block is the summary. Made by [`Json::with_summary`] (a
/// closure) or [`Json::summarized`] (`T`'s `Display`); `#[tool(summary = "…")]` makes one from
/// a `Json<T>` the tool returns.
///
/// A client of a protocol version without structured content (before 2025-06-18) gets the
/// structured content's JSON text in place of the summary: the data reaches it either way.
///
/// ```
/// use mcp_tool::content::Summarized;
/// use mcp_tool::prelude::*;
///
/// #[derive(Serialize, JsonSchema)]
/// struct Found {
///     users: Vec<String>,
/// }
///
/// /// Find users by name.
/// #[tool(read_only)]
/// fn find_users(name: String) -> Summarized<Found> {
///     let found = Found { users: vec![format!("{name} Lovelace")] };
///     Json(found).with_summary(|f| format!("{} users found", f.users.len()))
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let server = Server::new("t", "1").only(["find_users"]).build().unwrap();
/// let r = server.call("find_users", serde_json::json!({"name": "Ada"})).await.unwrap();
/// assert_eq!(r.text_content(), "1 users found");
/// assert_eq!(r.structured().unwrap(), serde_json::json!({"users": ["Ada Lovelace"]}));
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summarized<T> {
    value: T,
    summary: Summary,
}

/// Where a summary's text comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Summary {
    /// Written already.
    Text(String),
    /// `#[tool(summary = "…")]`: its fields are filled in from the value's JSON.
    Template(&'static str),
}

impl<T> Json<T> {
    /// The same structured output, with `summary(&value)` as the text for the model instead
    /// of the JSON copy (see [`Summarized`]).
    pub fn with_summary(self, summary: impl FnOnce(&T) -> String) -> Summarized<T> {
        let text = summary(&self.0);
        Summarized {
            value: self.0,
            summary: Summary::Text(text),
        }
    }
}

impl<T: fmt::Display> Json<T> {
    /// The same structured output, with the value's `Display` as the text for the model
    /// instead of the JSON copy (see [`Summarized`]).
    ///
    /// ```
    /// use std::fmt;
    ///
    /// use mcp_tool::content::Summarized;
    /// use mcp_tool::prelude::*;
    ///
    /// #[derive(Serialize, JsonSchema)]
    /// struct Weather {
    ///     city: String,
    ///     celsius: f64,
    /// }
    ///
    /// impl fmt::Display for Weather {
    ///     fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    ///         write!(f, "{}: {} °C", self.city, self.celsius)
    ///     }
    /// }
    ///
    /// /// The weather in a city.
    /// #[tool(read_only)]
    /// fn weather(city: String) -> Summarized<Weather> {
    ///     Json(Weather { city, celsius: 21.5 }).summarized()
    /// }
    /// # fn main() {}
    /// ```
    pub fn summarized(self) -> Summarized<T> {
        let text = self.0.to_string();
        Summarized {
            value: self.0,
            summary: Summary::Text(text),
        }
    }
}

impl<T> Summarized<T> {
    /// The structured value.
    pub fn value(&self) -> &T {
        &self.value
    }

    /// The structured value, taken back.
    pub fn into_value(self) -> T {
        self.value
    }
}

impl<T: Serialize + JsonSchema> IntoToolResult for Summarized<T> {
    fn into_tool_result(self) -> ToolResult {
        let structured = match Structured::new(&self.value) {
            Ok(structured) => structured,
            Err(e) => return ToolResult::error(format!("failed to serialize the result: {e}")),
        };
        let text = match self.summary {
            Summary::Text(text) => text,
            Summary::Template(template) => render(template, &structured.to_value()),
        };
        ToolResult {
            content: vec![Content::text(text)],
            structured_content: Some(structured),
            summarized: true,
            ..ToolResult::default()
        }
    }

    fn output_schema(generator: &mut SchemaGenerator) -> Option<Schema> {
        Json::<T>::output_schema(generator)
    }
}

/// A tool result that `#[tool(summary = …)]` summarizes: [`Json<T>`], and a `Result` or an
/// `Option` of one. Used by generated code.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`summary` needs a tool that returns `Json<T>`, not `{Self}`",
    label = "not `Json<T>`, nor a `Result` or `Option` of one",
    note = "a summary replaces the JSON copy of structured content: return `Json<T>`"
)]
pub trait Summarize {
    /// The value the summary is of.
    type Value;
    /// The result with its summary.
    type Summarized: IntoToolResult;

    /// The result with `summary(&value)` as its text.
    fn summarize_with(self, summary: impl FnOnce(&Self::Value) -> String) -> Self::Summarized;

    /// The result with `template`, its fields filled in from the value's JSON, as its text.
    fn summarize_template(self, template: &'static str) -> Self::Summarized;
}

impl<T: Serialize + JsonSchema> Summarize for Json<T> {
    type Value = T;
    type Summarized = Summarized<T>;

    fn summarize_with(self, summary: impl FnOnce(&T) -> String) -> Summarized<T> {
        self.with_summary(summary)
    }

    fn summarize_template(self, template: &'static str) -> Summarized<T> {
        Summarized {
            value: self.0,
            summary: Summary::Template(template),
        }
    }
}

impl<S: Summarize, E: IntoToolError> Summarize for Result<S, E> {
    type Value = S::Value;
    type Summarized = Result<S::Summarized, E>;

    fn summarize_with(self, summary: impl FnOnce(&S::Value) -> String) -> Self::Summarized {
        self.map(|s| s.summarize_with(summary))
    }

    fn summarize_template(self, template: &'static str) -> Self::Summarized {
        self.map(|s| s.summarize_template(template))
    }
}

impl<S: Summarize> Summarize for Option<S> {
    type Value = S::Value;
    type Summarized = Option<S::Summarized>;

    fn summarize_with(self, summary: impl FnOnce(&S::Value) -> String) -> Self::Summarized {
        self.map(|s| s.summarize_with(summary))
    }

    fn summarize_template(self, template: &'static str) -> Self::Summarized {
        self.map(|s| s.summarize_template(template))
    }
}

/// A piece of a summary template.
#[derive(Debug, PartialEq, Eq)]
enum Piece<'t> {
    /// Text as it is (`{{` and `}}` already made single braces).
    Text(String),
    /// `{field}` or `{field.sub}`: the path's segments.
    Field(Vec<&'t str>),
}

/// The pieces of a template: text, and `{field.path}` placeholders (`{{`, `}}` for braces);
/// `None` when it is malformed (the macro refuses such a template at compile time).
fn pieces(template: &str) -> Option<Vec<Piece<'_>>> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        text.push_str(&rest[..i]);
        let brace = &rest[i..i + 1];
        rest = &rest[i + 1..];
        if rest.starts_with(brace) {
            text.push_str(brace);
            rest = &rest[1..];
            continue;
        }
        if brace == "}" {
            return None;
        }
        let end = rest.find(['{', '}']).filter(|&e| &rest[e..e + 1] == "}")?;
        let path: Vec<&str> = rest[..end].split('.').collect();
        if path
            .iter()
            .any(|s| s.is_empty() || s.contains(char::is_whitespace))
        {
            return None;
        }
        if !text.is_empty() {
            out.push(Piece::Text(std::mem::take(&mut text)));
        }
        out.push(Piece::Field(path));
        rest = &rest[end + 1..];
    }
    text.push_str(rest);
    if !text.is_empty() {
        out.push(Piece::Text(text));
    }
    Some(out)
}

/// A template's text with each field's value (a string as it is, anything else as JSON,
/// `null` for a field the value lacks). The fields are those of the structured content as a
/// client sees it: a value that is no object is the field `result`.
fn render(template: &str, value: &Value) -> String {
    let Some(pieces) = pieces(template) else {
        return template.to_owned();
    };
    let mut out = String::new();
    for piece in pieces {
        match piece {
            Piece::Text(text) => out.push_str(&text),
            Piece::Field(path) => match field(value, &path) {
                Some(Value::String(s)) => out.push_str(s),
                Some(other) => out.push_str(&other.to_string()),
                None => out.push_str("null"),
            },
        }
    }
    out
}

/// The value at `path` (object fields, array indexes) in the structured content.
fn field<'v>(value: &'v Value, path: &[&str]) -> Option<&'v Value> {
    let (first, rest) = path.split_first()?;
    let mut current = match value {
        Value::Object(fields) => fields.get(*first)?,
        other if *first == "result" => other,
        _ => return None,
    };
    for segment in rest {
        current = match current {
            Value::Object(fields) => fields.get(*segment)?,
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(current)
}

/// Checks, while the server starts, that a summary template names only fields the tool's
/// result (`R`) has, when its schema says which it has.
pub(crate) fn check_template<R: IntoToolResult>(template: &str) -> Result<(), String> {
    let Some(pieces) = pieces(template) else {
        return Err(format!("the summary template `{template}` is malformed"));
    };
    let mut generator = generator();
    let Some(schema) = R::output_schema(&mut generator) else {
        return Ok(());
    };
    let Some(fields) = top_fields(&generator, schema.to_value()) else {
        return Ok(());
    };
    for piece in pieces {
        if let Piece::Field(path) = piece
            && !fields.iter().any(|f| f == path[0])
        {
            let known: Vec<String> = fields.iter().map(|f| format!("`{f}`")).collect();
            return Err(format!(
                "the summary template names `{{{}}}`, which is no field of the tool's result \
                 (its fields: {})",
                path.join("."),
                known.join(", ")
            ));
        }
    }
    Ok(())
}

/// The top-level fields of structured content of this schema: an object's properties (`None`
/// when it also takes others), `result` for anything else; `None` when the schema does not say.
fn top_fields(generator: &SchemaGenerator, schema: Value) -> Option<Vec<String>> {
    let mut schema = schema;
    for _ in 0..8 {
        if schema.get("$ref").is_some() {
            schema = resolve_ref(generator, Schema::try_from(schema).ok()?).to_value();
            if schema.get("$ref").is_some() {
                return None;
            }
            continue;
        }
        let branches = ["anyOf", "oneOf"]
            .iter()
            .find_map(|k| schema.get(*k).and_then(Value::as_array));
        if let Some(branches) = branches {
            let mut others = branches
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"));
            let only = others.next()?.clone();
            if others.next().is_some() {
                return None;
            }
            schema = only;
            continue;
        }
        return match schema.get("type").and_then(Value::as_str) {
            Some("object") => {
                let open = !matches!(
                    schema.get("additionalProperties"),
                    None | Some(Value::Bool(false))
                );
                let properties = schema.get("properties").and_then(Value::as_object)?;
                (!open).then(|| properties.keys().cloned().collect())
            }
            Some(_) => Some(vec!["result".to_owned()]),
            None => None,
        };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn templates_fill_in_fields() {
        let value = json!({"count": 3, "query": "ada", "user": {"name": "Ada", "tags": ["x"]}});
        assert_eq!(
            render("{count} users for {query}", &value),
            "3 users for ada"
        );
        assert_eq!(render("{user.name} {user.tags}", &value), r#"Ada ["x"]"#);
        assert_eq!(render("{user.tags.0}!", &value), "x!");
        assert_eq!(render("{{literal}} {missing}", &value), "{literal} null");
        assert_eq!(render("{result} items", &json!(7)), "7 items");
        assert_eq!(render("no fields", &value), "no fields");
    }

    #[test]
    fn malformed_templates_are_refused() {
        for bad in [
            "{", "}", "{count", "count}", "{}", "{a..b}", "{ a }", "{a{b}}",
        ] {
            assert_eq!(pieces(bad), None, "{bad}");
        }
        assert_eq!(
            pieces("a {b.c} {{d}}"),
            Some(vec![
                Piece::Text("a ".into()),
                Piece::Field(vec!["b", "c"]),
                Piece::Text(" {d}".into()),
            ])
        );
    }

    #[derive(Serialize, JsonSchema)]
    struct Found {
        count: u32,
        query: String,
    }

    #[test]
    fn a_template_names_only_fields_of_the_result() {
        assert_eq!(check_template::<Json<Found>>("{count} for {query}"), Ok(()));
        assert_eq!(
            check_template::<Result<Option<Json<Found>>, String>>("{count}"),
            Ok(())
        );
        let error = check_template::<Json<Found>>("{cuont}").unwrap_err();
        assert!(error.contains("`{cuont}`"), "{error}");
        assert!(error.contains("`count`, `query`"), "{error}");
        assert_eq!(check_template::<Json<Vec<u8>>>("{result}"), Ok(()));
        assert!(check_template::<Json<Vec<u8>>>("{len}").is_err());
        // No schema to check against: anything goes.
        assert_eq!(check_template::<Json<Value>>("{anything}"), Ok(()));
    }

    #[test]
    fn a_summary_replaces_the_text_copy_only() {
        let plain = Json(json!({"count": 2})).into_tool_result();
        let summarized = Json(json!({"count": 2}))
            .with_summary(|v| format!("{} found", v["count"]))
            .into_tool_result();
        assert_eq!(summarized.text_content(), "2 found");
        assert!(summarized.summarized);
        assert!(!plain.summarized);
        assert_eq!(summarized.structured_content, plain.structured_content);
        let templated = Json(json!({"count": 2}))
            .summarize_template("{count} found")
            .into_tool_result();
        assert_eq!(templated.text_content(), "2 found");
        let shown = Json(5u8).summarized().into_tool_result();
        assert_eq!(shown.text_content(), "5");
    }

    #[test]
    fn errors_and_nothing_stay_as_they_are() {
        let failed: Result<Json<u8>, String> = Err("no".into());
        let result = failed.summarize_with(|_| "x".into()).into_tool_result();
        assert!(result.is_error);
        assert_eq!(result.text_content(), "no");
        let none: Option<Json<u8>> = None;
        assert_eq!(
            none.summarize_template("{result}").into_tool_result(),
            None::<Json<u8>>.into_tool_result()
        );
    }
}
