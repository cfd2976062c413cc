//! Content blocks: what a tool result, a prompt message or an embedded resource carries —
//! text, images, audio, links to resources, embedded resources — each with optional
//! annotations. The types are the wire form (a block tagged by `type`), so serializing one is
//! writing its JSON.

use std::borrow::Cow;

use base64::Engine as _;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::version::ProtocolVersion;

/// Encodes bytes as standard base64, as MCP carries binary data.
pub fn base64_encode(bytes: impl AsRef<[u8]>) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Who a block is meant for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Audience {
    /// The human user.
    User,
    /// The model.
    Assistant,
}

/// Who says a message (of a prompt, or of a sampling request).
pub type Role = Audience;

/// Hints about a block: who it is for, how important it is, when it last changed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContentAnnotations {
    /// Who the block is meant for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub audience: Vec<Audience>,
    /// Importance from 0 (least) to 1 (most); values outside are sent clamped.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "clamped_priority"
    )]
    pub priority: Option<f64>,
    /// When the underlying data last changed (ISO 8601).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

fn clamped_priority<S: Serializer>(p: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    p.map(|p| p.clamp(0.0, 1.0)).serialize(s)
}

/// A text block.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Its annotations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ContentAnnotations>,
    /// Its `_meta`.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// An image or audio block: base64 data and its MIME type.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MediaContent {
    /// Base64-encoded bytes.
    pub data: String,
    /// The MIME type (`image/png`, `audio/wav`, …).
    pub mime_type: String,
    /// Its annotations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ContentAnnotations>,
    /// Its `_meta`.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// A link to a resource the client may read (`resource_link`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceLink {
    /// The resource's URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// A human-readable title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Its annotations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ContentAnnotations>,
    /// Its `_meta`.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// A resource embedded whole in a block.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EmbeddedResource {
    /// The resource's contents.
    pub resource: ResourceContents,
    /// Its annotations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ContentAnnotations>,
    /// Its `_meta`.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The contents of a resource: text or binary (base64), with its URI and MIME type.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// Its MIME type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Text, or base64-encoded bytes.
    #[serde(flatten)]
    pub body: ResourceBody,
    /// The contents' `_meta`.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// A resource's body: `text` or `blob` on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ResourceBody {
    /// Text.
    Text(String),
    /// Bytes, base64-encoded.
    Blob(String),
}

impl ResourceContents {
    /// Text contents.
    pub fn text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        ResourceContents {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            body: ResourceBody::Text(text.into()),
            meta: None,
        }
    }

    /// Binary contents (encoded as base64 here).
    pub fn blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        bytes: impl AsRef<[u8]>,
    ) -> Self {
        ResourceContents {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            body: ResourceBody::Blob(base64_encode(bytes)),
            meta: None,
        }
    }

    /// Adds entries to the contents' `_meta`.
    #[must_use]
    pub fn with_meta(mut self, meta: Map<String, Value>) -> Self {
        self.meta.get_or_insert_with(Map::new).extend(meta);
        self
    }
}

/// One block of content: its `type` tags it on the wire.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// Plain text.
    Text(TextContent),
    /// An image: base64 data and its MIME type.
    Image(MediaContent),
    /// Audio: base64 data and its MIME type.
    Audio(MediaContent),
    /// A link to a resource.
    ResourceLink(ResourceLink),
    /// A resource embedded whole.
    Resource(EmbeddedResource),
    /// A block given as its JSON form (a block type of the user's own), sent as it is.
    #[serde(untagged)]
    Raw(Value),
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text(TextContent {
            text: text.into(),
            ..TextContent::default()
        })
    }

    /// An image block from raw bytes (encoded as base64 here).
    pub fn image(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Content::Image(MediaContent {
            data: base64_encode(bytes),
            mime_type: mime_type.into(),
            ..MediaContent::default()
        })
    }

    /// An audio block from raw bytes (encoded as base64 here).
    pub fn audio(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Content::Audio(MediaContent {
            data: base64_encode(bytes),
            mime_type: mime_type.into(),
            ..MediaContent::default()
        })
    }

    /// A link to a resource.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Content::ResourceLink(ResourceLink {
            uri: uri.into(),
            name: name.into(),
            ..ResourceLink::default()
        })
    }

    /// An embedded resource.
    pub fn resource(contents: ResourceContents) -> Self {
        Content::Resource(EmbeddedResource {
            resource: contents,
            annotations: None,
            meta: None,
        })
    }

    /// The block with annotations (a raw block gets them as its `annotations` member).
    #[must_use]
    pub fn annotate(mut self, annotations: ContentAnnotations) -> Self {
        match &mut self {
            Content::Text(b) => b.annotations = Some(annotations),
            Content::Image(b) | Content::Audio(b) => b.annotations = Some(annotations),
            Content::ResourceLink(b) => b.annotations = Some(annotations),
            Content::Resource(b) => b.annotations = Some(annotations),
            Content::Raw(Value::Object(m)) => {
                if let Ok(v) = serde_json::to_value(annotations) {
                    m.insert("annotations".into(), v);
                }
            }
            Content::Raw(_) => {}
        }
        self
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text(t) => Some(&t.text),
            _ => None,
        }
    }

    /// The JSON form of this block.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The block as a client of `version` can read it: blocks the version lacks (audio before
    /// 2025-03-26, resource links before 2025-06-18) described in text instead.
    pub(crate) fn for_version(&self, version: ProtocolVersion) -> Cow<'_, Content> {
        match self {
            Content::Audio(a) if !version.has_audio() => Cow::Owned(Content::text(format!(
                "[audio ({}) not shown: this client's protocol version has no audio]",
                a.mime_type
            ))),
            Content::ResourceLink(l) if !version.has_structured() => {
                Cow::Owned(Content::text(format!("Resource: {} <{}>", l.name, l.uri)))
            }
            other => Cow::Borrowed(other),
        }
    }
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Content::text(text)
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Content::text(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_serialize_as_the_specification_shapes_them() {
        let cases = [
            (Content::text("hi"), json!({"type": "text", "text": "hi"})),
            (
                Content::image([1u8, 2, 3], "image/png"),
                json!({"type": "image", "data": "AQID", "mimeType": "image/png"}),
            ),
            (
                Content::audio([4u8], "audio/wav"),
                json!({"type": "audio", "data": "BA==", "mimeType": "audio/wav"}),
            ),
            (
                Content::resource_link("file:///x", "x"),
                json!({"type": "resource_link", "uri": "file:///x", "name": "x"}),
            ),
            (
                Content::resource(ResourceContents::text("file:///y", "text/plain", "y")),
                json!({"type": "resource", "resource": {"uri": "file:///y", "mimeType": "text/plain", "text": "y"}}),
            ),
            (
                Content::resource(ResourceContents::blob("file:///z", "a/b", [0u8; 3])),
                json!({"type": "resource", "resource": {"uri": "file:///z", "mimeType": "a/b", "blob": "AAAA"}}),
            ),
            (
                Content::text("n").annotate(ContentAnnotations {
                    audience: vec![Audience::User],
                    priority: Some(1.5),
                    last_modified: None,
                }),
                json!({"type": "text", "text": "n", "annotations": {"audience": ["user"], "priority": 1.0}}),
            ),
            (
                Content::Raw(json!({"type": "video", "uri": "v"})),
                json!({"type": "video", "uri": "v"}),
            ),
        ];
        for (block, want) in cases {
            assert_eq!(block.to_json(), want);
        }
    }

    #[test]
    fn older_versions_read_newer_blocks_as_text() {
        let link = Content::resource_link("file:///x", "x");
        assert_eq!(
            link.for_version(ProtocolVersion::V2025_03_26).as_text(),
            Some("Resource: x <file:///x>")
        );
        assert_eq!(*link.for_version(ProtocolVersion::V2025_11_25), link);
        let audio = Content::audio([1u8], "audio/wav");
        assert!(
            audio
                .for_version(ProtocolVersion::V2024_11_05)
                .as_text()
                .is_some()
        );
        assert_eq!(*audio.for_version(ProtocolVersion::V2025_03_26), audio);
    }
}
