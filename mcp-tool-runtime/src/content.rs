//! Content blocks: what a tool result, a prompt message or a resource carries — text, images,
//! audio, links to resources, embedded resources — with optional annotations, and the
//! [`IntoContent`] trait through which users add block types of their own.

use base64::Engine as _;
use serde_json::{Map, Value};

/// Encodes bytes as standard base64, as MCP carries binary data.
pub fn base64_encode(bytes: impl AsRef<[u8]>) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Who a block is meant for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// The human user.
    User,
    /// The model.
    Assistant,
}

/// Hints about a block: who it is for, how important it is, when it last changed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContentAnnotations {
    /// Who the block is meant for.
    pub audience: Vec<Audience>,
    /// Importance from 0 (least) to 1 (most).
    pub priority: Option<f64>,
    /// When the underlying data last changed (ISO 8601).
    pub last_modified: Option<String>,
}

impl ContentAnnotations {
    fn to_json(&self) -> Value {
        let mut m = Map::new();
        if !self.audience.is_empty() {
            let audience = self
                .audience
                .iter()
                .map(|a| {
                    Value::String(
                        match a {
                            Audience::User => "user",
                            Audience::Assistant => "assistant",
                        }
                        .into(),
                    )
                })
                .collect();
            m.insert("audience".into(), Value::Array(audience));
        }
        if let Some(p) = self.priority {
            m.insert("priority".into(), Value::from(p.clamp(0.0, 1.0)));
        }
        if let Some(t) = &self.last_modified {
            m.insert("lastModified".into(), Value::String(t.clone()));
        }
        Value::Object(m)
    }
}

/// The contents of a resource: text or binary (base64), with its URI and MIME type.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// Its MIME type.
    pub mime_type: Option<String>,
    /// Text, or base64-encoded bytes.
    pub body: ResourceBody,
    /// The contents' `_meta`.
    pub meta: Option<Map<String, Value>>,
}

/// A resource's body.
#[derive(Debug, Clone, PartialEq, Eq)]
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

    /// The JSON form (`TextResourceContents` or `BlobResourceContents`).
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("uri".into(), Value::String(self.uri.clone()));
        if let Some(t) = &self.mime_type {
            m.insert("mimeType".into(), Value::String(t.clone()));
        }
        match &self.body {
            ResourceBody::Text(t) => m.insert("text".into(), Value::String(t.clone())),
            ResourceBody::Blob(b) => m.insert("blob".into(), Value::String(b.clone())),
        };
        if let Some(meta) = &self.meta {
            m.insert("_meta".into(), Value::Object(meta.clone()));
        }
        Value::Object(m)
    }
}

/// A link to a resource the client may read (`resource_link`).
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceLink {
    /// The resource's URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// A human-readable title.
    pub title: Option<String>,
    /// What it is.
    pub description: Option<String>,
    /// Its MIME type.
    pub mime_type: Option<String>,
    /// Its size in bytes.
    pub size: Option<u64>,
}

/// One block of content.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Content {
    /// Plain text.
    Text(String),
    /// An image: base64 data and its MIME type.
    Image {
        /// Base64-encoded bytes.
        data: String,
        /// The MIME type (`image/png`, …).
        mime_type: String,
    },
    /// Audio: base64 data and its MIME type.
    Audio {
        /// Base64-encoded bytes.
        data: String,
        /// The MIME type (`audio/wav`, …).
        mime_type: String,
    },
    /// A link to a resource.
    ResourceLink(ResourceLink),
    /// A resource embedded whole.
    Resource(ResourceContents),
    /// A block with annotations.
    Annotated(Box<Content>, ContentAnnotations),
    /// A block given as its JSON form (see [`IntoContent`]).
    Raw(Value),
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text(text.into())
    }

    /// An image block from raw bytes (encoded as base64 here).
    pub fn image(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: base64_encode(bytes),
            mime_type: mime_type.into(),
        }
    }

    /// An audio block from raw bytes (encoded as base64 here).
    pub fn audio(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Content::Audio {
            data: base64_encode(bytes),
            mime_type: mime_type.into(),
        }
    }

    /// A link to a resource.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Content::ResourceLink(ResourceLink {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
        })
    }

    /// An embedded resource.
    pub fn resource(contents: ResourceContents) -> Self {
        Content::Resource(contents)
    }

    /// The block with annotations.
    #[must_use]
    pub fn annotate(self, annotations: ContentAnnotations) -> Self {
        match self {
            Content::Annotated(inner, _) => Content::Annotated(inner, annotations),
            other => Content::Annotated(Box::new(other), annotations),
        }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text(t) => Some(t),
            Content::Annotated(inner, _) => inner.as_text(),
            _ => None,
        }
    }

    /// The JSON form of this block.
    pub fn to_json(&self) -> Value {
        let mut m = Map::with_capacity(3);
        let kind = |m: &mut Map<String, Value>, t: &str| {
            m.insert("type".into(), Value::String(t.into()));
        };
        match self {
            Content::Text(t) => {
                kind(&mut m, "text");
                m.insert("text".into(), Value::String(t.clone()));
            }
            Content::Image { data, mime_type } | Content::Audio { data, mime_type } => {
                kind(
                    &mut m,
                    if matches!(self, Content::Image { .. }) {
                        "image"
                    } else {
                        "audio"
                    },
                );
                m.insert("data".into(), Value::String(data.clone()));
                m.insert("mimeType".into(), Value::String(mime_type.clone()));
            }
            Content::ResourceLink(link) => {
                kind(&mut m, "resource_link");
                m.insert("uri".into(), Value::String(link.uri.clone()));
                m.insert("name".into(), Value::String(link.name.clone()));
                for (key, value) in [
                    ("title", &link.title),
                    ("description", &link.description),
                    ("mimeType", &link.mime_type),
                ] {
                    if let Some(v) = value {
                        m.insert(key.into(), Value::String(v.clone()));
                    }
                }
                if let Some(size) = link.size {
                    m.insert("size".into(), Value::from(size));
                }
            }
            Content::Resource(contents) => {
                kind(&mut m, "resource");
                m.insert("resource".into(), contents.to_json());
            }
            Content::Annotated(inner, annotations) => {
                let mut v = inner.to_json();
                if let Some(obj) = v.as_object_mut() {
                    obj.insert("annotations".into(), annotations.to_json());
                }
                return v;
            }
            Content::Raw(v) => return v.clone(),
        }
        Value::Object(m)
    }
}

/// The same JSON as [`Content::to_json`], written without building it: text blocks (the
/// common case) directly, other blocks through their JSON form.
impl serde::Serialize for Content {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        match self {
            Content::Text(text) => {
                let mut m = serializer.serialize_map(Some(2))?;
                m.serialize_entry("type", "text")?;
                m.serialize_entry("text", text)?;
                m.end()
            }
            Content::Raw(v) => v.serialize(serializer),
            other => other.to_json().serialize(serializer),
        }
    }
}

/// A block type of the user's own (seed 000's `VideoContent`): anything that can say what its
/// JSON form is. `Content::from_block(video)` turns it into a [`Content`].
///
/// ```
/// use mcp_tool::{Content, IntoContent};
/// use serde_json::{Value, json};
///
/// struct Video { url: String }
///
/// impl IntoContent for Video {
///     fn into_content(self) -> Content {
///         Content::Raw(json!({ "type": "resource_link", "uri": self.url, "name": "video", "mimeType": "video/mp4" }))
///     }
/// }
///
/// let block = Content::from_block(Video { url: "https://example.com/v.mp4".into() });
/// assert_eq!(block.to_json()["mimeType"], "video/mp4");
/// ```
pub trait IntoContent {
    /// The block.
    fn into_content(self) -> Content;
}

impl IntoContent for Content {
    fn into_content(self) -> Content {
        self
    }
}

impl Content {
    /// A block of a user-defined type.
    pub fn from_block(block: impl IntoContent) -> Self {
        block.into_content()
    }
}
