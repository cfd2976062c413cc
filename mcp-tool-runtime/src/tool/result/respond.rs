//! The response carrying a tool's result ([`ToolResult::respond`]): the version's view of it,
//! written by hand for the common result and by serde for any other.

use super::{Content, ToolResult};
use crate::protocol::wire::{
    Implementation, ResultMeta, StatelessCallToolResult, UnstructuredCallToolResult,
};
use crate::protocol::{ProtocolVersion, jsonrpc};

impl ToolResult {
    /// The response to request `id` carrying this result, as a client of `version` reads it: in
    /// 2026-07-28 with `resultType` and the server's identity (`info`) in `_meta`.
    pub(crate) fn respond(
        &self,
        id: &str,
        version: ProtocolVersion,
        info: &Implementation,
    ) -> String {
        match self.respond_plain(id, version, info) {
            Some(text) => text,
            None => self.respond_serialized(id, version, info),
        }
    }

    /// [`ToolResult::respond`] for the common result, written by hand: text blocks without
    /// annotations or `_meta`, the structured content as its text, no `_meta` of its own, to
    /// a client of a version with structured content. The bytes are those serde writes (a test
    /// compares them), without serde's per-field machinery and with the text escaped byte by
    /// byte into a buffer sized for it (grown only for a control character, escaped as six
    /// bytes). `None` for any other result.
    fn respond_plain(
        &self,
        id: &str,
        version: ProtocolVersion,
        info: &Implementation,
    ) -> Option<String> {
        if self.meta.is_some() || !version.has_structured() {
            return None;
        }
        let meta = version.is_stateless().then(|| info.result_meta().get());
        if let Some(text) = self.respond_copy(id, meta) {
            return Some(text);
        }
        let mut size = 96 + id.len();
        for block in &self.content {
            match block {
                // The room `push_json_string` makes: two bytes a byte.
                Content::Text(t) if t.annotations.is_none() && t.meta.is_none() => {
                    size += 2 * t.text.len() + 32;
                }
                _ => return None,
            }
        }
        size += self
            .structured_content
            .as_ref()
            .map_or(0, |s| s.get().len());
        size += meta.map_or(0, str::len);
        let mut out = Vec::with_capacity(size);
        out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
        out.extend_from_slice(id.as_bytes());
        out.extend_from_slice(b",\"result\":{\"content\":[");
        for (i, text) in self.content.iter().filter_map(Content::as_text).enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"type\":\"text\",\"text\":");
            jsonrpc::push_json_string(&mut out, text);
            out.push(b'}');
        }
        out.push(b']');
        if let Some(structured) = &self.structured_content {
            out.extend_from_slice(b",\"structuredContent\":");
            out.extend_from_slice(structured.get().as_bytes());
        }
        if self.is_error {
            out.extend_from_slice(b",\"isError\":true");
        }
        if let Some(meta) = meta {
            out.extend_from_slice(b",\"resultType\":\"complete\",\"_meta\":");
            out.extend_from_slice(meta.as_bytes());
        }
        out.extend_from_slice(b"}}");
        // Text and escapes of text: UTF-8.
        String::from_utf8(out).ok()
    }

    /// [`ToolResult::respond_plain`] for a `Json<T>` result as it came: one text block that
    /// is the structured content's text, whose escaped form was written beside it (see
    /// `Structured::with_copy`), so nothing is escaped or checked here. `None` for any other
    /// (a block changed since, or another one added, or structured content replaced).
    fn respond_copy(&self, id: &str, meta: Option<&str>) -> Option<String> {
        let structured = self.structured_content.as_ref()?;
        let escaped = structured.escaped()?;
        let [Content::Text(block)] = &self.content[..] else {
            return None;
        };
        let json = structured.get();
        if block.annotations.is_some() || block.meta.is_some() || block.text != json {
            return None;
        }
        let meta_len = meta.map_or(0, str::len);
        let mut out = String::with_capacity(128 + id.len() + escaped.len() + json.len() + meta_len);
        out.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
        out.push_str(id);
        out.push_str(",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"");
        out.push_str(escaped);
        out.push_str("\"}],\"structuredContent\":");
        out.push_str(json);
        if self.is_error {
            out.push_str(",\"isError\":true");
        }
        if let Some(meta) = meta {
            out.push_str(",\"resultType\":\"complete\",\"_meta\":");
            out.push_str(meta);
        }
        out.push_str("}}");
        Some(out)
    }

    /// [`ToolResult::respond`] through serde: any result, to a client of any version.
    fn respond_serialized(
        &self,
        id: &str,
        version: ProtocolVersion,
        info: &Implementation,
    ) -> String {
        let size = self.size_hint();
        if version.is_stateless() {
            return jsonrpc::sized_result_response(
                id,
                &StatelessCallToolResult {
                    content: &self.content,
                    structured_content: self.structured_content.as_ref().and_then(|s| s.raw().ok()),
                    is_error: self.is_error,
                    result_type: "complete",
                    meta: ResultMeta {
                        server_info: info,
                        extra: self.meta.as_ref(),
                    },
                },
                size + 128,
            );
        }
        if version.has_structured() {
            return jsonrpc::sized_result_response(id, self, size);
        }
        // A summary stands for structured content this version cannot carry: the client gets
        // the JSON text instead, as it would without the summary.
        let copy;
        let content = match &self.structured_content {
            Some(structured) if self.summarized => {
                copy = [Content::text(structured.get())];
                &copy[..]
            }
            _ => &self.content[..],
        };
        let unstructured = UnstructuredCallToolResult {
            content: content.iter().map(|c| c.for_version(version)).collect(),
            is_error: self.is_error,
            meta: self.meta.as_ref(),
        };
        jsonrpc::sized_result_response(id, &unstructured, size)
    }

    /// About how many bytes the result takes as JSON: its text (with room for escapes), its
    /// structured content, and some for the rest.
    fn size_hint(&self) -> usize {
        let blocks: usize = self
            .content
            .iter()
            .map(|c| c.as_text().map_or(128, |t| t.len() + t.len() / 8 + 32))
            .sum();
        let structured = self
            .structured_content
            .as_ref()
            .map_or(0, |s| s.get().len());
        64 + blocks + structured
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::{IntoToolResult, Json};
    use schemars::JsonSchema;
    use serde::Serialize;
    use serde_json::{Map, Value, json};

    #[test]
    fn json_is_serialized_once_for_both_forms() {
        #[derive(Serialize, JsonSchema)]
        struct User {
            name: &'static str,
            id: u32,
        }
        let result = Json(User { name: "Ada", id: 7 }).into_tool_result();
        let structured = result.structured_content.as_ref().unwrap();
        // In the struct's field order, and the text copy is the same text.
        assert_eq!(structured.get(), r#"{"name":"Ada","id":7}"#);
        assert_eq!(result.text_content(), structured.get());
        let text = result.respond(
            "1",
            ProtocolVersion::V2025_11_25,
            &Implementation::default(),
        );
        assert_eq!(
            text,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"name\":\"Ada\",\"id\":7}"}],"structuredContent":{"name":"Ada","id":7}}}"#
        );
    }

    #[test]
    fn the_plain_response_is_the_one_serde_writes() {
        let info = Implementation {
            name: "s".into(),
            version: "1".into(),
            ..Implementation::default()
        };
        let mut meta = Map::new();
        meta.insert("k".into(), json!(1));
        let results = [
            ToolResult::text("5"),
            ToolResult::error("bad \"x\"\n\u{1}é"),
            ToolResult::default(),
            ToolResult {
                content: vec![Content::text("a"), Content::text("b\\")],
                structured_content: Some(json!({"b": [1, "2"], "a": null}).into()),
                ..ToolResult::default()
            },
            Json(json!({"id": "x\"y"})).into_tool_result(),
            Json(json!({"a\\": ["\n\u{1}é", 1.5, null, {"b": true}]})).into_tool_result(),
            ToolResult {
                is_error: true,
                ..Json(json!({"id": 2})).into_tool_result()
            },
            // A copy's block changed after the call: the text is the block's.
            changed_copy(),
            ToolResult {
                structured_content: Some(json!({"id": 3}).into()),
                ..Json(json!({"id": 3})).into_tool_result()
            },
            ToolResult {
                structured_content: Some(json!({"n": 1}).into()),
                is_error: true,
                ..ToolResult::default()
            },
            // Not plain: written by serde alone.
            ToolResult {
                meta: Some(meta),
                ..ToolResult::text("m")
            },
            ToolResult {
                content: vec![Content::resource_link("file:///x", "x")],
                ..ToolResult::default()
            },
        ];
        let mut plain = 0;
        for result in &results {
            for version in ProtocolVersion::SHAPES {
                let serialized = result.respond_serialized("7", version, &info);
                if let Some(text) = result.respond_plain("7", version, &info) {
                    assert_eq!(text, serialized, "{result:?} in {version:?}");
                    plain += 1;
                }
                assert_eq!(result.respond("7", version, &info), serialized);
            }
        }
        assert_eq!(
            plain, 20,
            "the first ten results, in the two shapes with structured content"
        );
    }

    /// A `Json` result whose text block was changed after it was made (as middleware may).
    fn changed_copy() -> ToolResult {
        let mut result = Json(json!({"id": "x"})).into_tool_result();
        result.content = vec![Content::text("{\"id\":\"y\"}")];
        result
    }

    #[test]
    fn a_changed_copy_is_written_as_it_now_is() {
        let result = changed_copy();
        let text = result.respond(
            "1",
            ProtocolVersion::V2025_11_25,
            &Implementation::default(),
        );
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["result"]["content"][0]["text"], "{\"id\":\"y\"}");
        assert_eq!(v["result"]["structuredContent"], json!({"id": "x"}));
    }

    #[test]
    fn older_versions_get_the_json_text_in_place_of_a_summary() {
        let result = Json(json!({"id": 1}))
            .with_summary(|_| "one user".into())
            .into_tool_result();
        let content = |version| {
            let text = result.respond("1", version, &Implementation::default());
            serde_json::from_str::<Value>(&text).unwrap()["result"]["content"].clone()
        };
        for version in [ProtocolVersion::V2024_11_05, ProtocolVersion::V2025_03_26] {
            assert_eq!(
                content(version),
                json!([{"type": "text", "text": "{\"id\":1}"}]),
                "{version:?}"
            );
        }
        for version in [
            ProtocolVersion::V2025_06_18,
            ProtocolVersion::V2025_11_25,
            ProtocolVersion::V2026_07_28,
        ] {
            assert_eq!(
                content(version),
                json!([{"type": "text", "text": "one user"}]),
                "{version:?}"
            );
        }
    }

    #[test]
    fn older_versions_get_no_structured_content() {
        let result = ToolResult {
            content: vec![Content::resource_link("file:///x", "x")],
            structured_content: Some(json!({ "id": 1 }).into()),
            ..ToolResult::default()
        };
        let text = result.respond(
            "1",
            ProtocolVersion::V2025_03_26,
            &Implementation::default(),
        );
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v["result"],
            json!({"content": [{"type": "text", "text": "Resource: x <file:///x>"}]})
        );
    }
}
