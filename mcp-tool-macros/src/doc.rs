//! A tool's default description: its doc comment.
//!
//! Only `#[doc = "…"]` attributes count (what `///` and `/** */` become); any other attribute
//! between them is skipped, never a reason to start over. Each fragment loses one leading space
//! per line (the one after `///`), the lines are joined with `\n`, and blank lines at either end
//! are dropped.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// An item's doc comment.
pub(crate) enum Doc<'a> {
    /// The folded text and the span of its first line.
    Text(String, Span),
    /// No doc comment, or only blank lines.
    None,
    /// A `#[doc = …]` whose value is not a literal (`include_str!(…)`): a macro cannot read it.
    Unreadable(&'a Expr),
}

/// The doc comment of an item with these attributes.
pub(crate) fn description(attrs: &[Attribute]) -> Doc<'_> {
    let mut span = None;
    let mut fragments = Vec::new();
    for attr in attrs {
        let Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        if !nv.path.is_ident("doc") {
            continue;
        }
        match &nv.value {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => {
                span.get_or_insert_with(|| attr.span());
                fragments.push(s.value());
            }
            other => return Doc::Unreadable(other),
        }
    }
    let text = fold(&fragments);
    if text.is_empty() {
        return Doc::None;
    }
    Doc::Text(text, span.unwrap_or_else(Span::call_site))
}

/// Folds doc fragments (one per `///` line, or one per `/** */` block) into one text.
pub(crate) fn fold<S: AsRef<str>>(fragments: &[S]) -> String {
    let lines: Vec<&str> = fragments
        .iter()
        // Not `lines()`: an empty `///` is an empty line, not none.
        .flat_map(|f| f.as_ref().split('\n'))
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .map(|line| line.strip_prefix(' ').unwrap_or(line))
        .collect();
    let blank = |line: &&str| line.trim().is_empty();
    let start = lines.iter().position(|l| !blank(l)).unwrap_or(lines.len());
    let end = lines
        .iter()
        .rposition(|l| !blank(l))
        .map_or(start, |i| i + 1);
    lines[start..end].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_leading_space_is_stripped_per_line() {
        assert_eq!(fold(&[" Multiply two numbers."]), "Multiply two numbers.");
        assert_eq!(fold(&["  indented", "none"]), " indented\nnone");
    }

    #[test]
    fn lines_are_joined_with_newlines() {
        assert_eq!(
            fold(&[" First line.", "", " Second paragraph."]),
            "First line.\n\nSecond paragraph."
        );
    }

    #[test]
    fn blank_lines_at_either_end_are_dropped() {
        assert_eq!(fold(&["", " ", " Text.", "   ", ""]), "Text.");
        assert_eq!(fold(&["", "  "]), "");
        assert_eq!(fold::<&str>(&[]), "");
    }

    #[test]
    fn block_comments_are_split_into_lines() {
        assert_eq!(
            fold(&["\n Block line one.\n Block line two.\n"]),
            "Block line one.\nBlock line two."
        );
    }

    #[test]
    fn only_doc_attributes_count() {
        let item: syn::ItemFn = syn::parse_quote! {
            /// Adds.
            #[inline]
            ///
            /// More.
            #[doc(hidden)]
            fn add() {}
        };
        let Doc::Text(text, _) = description(&item.attrs) else {
            panic!("no text");
        };
        assert_eq!(text, "Adds.\n\nMore.");
    }

    #[test]
    fn empty_doc_is_no_description() {
        let item: syn::ItemFn = syn::parse_quote! {
            ///
            #[doc = "  "]
            fn add() {}
        };
        assert!(matches!(description(&item.attrs), Doc::None));
    }

    #[test]
    fn a_doc_from_a_macro_is_unreadable() {
        let item: syn::ItemFn = syn::parse_quote! {
            /// Literal.
            #[doc = include_str!("README.md")]
            fn add() {}
        };
        assert!(matches!(description(&item.attrs), Doc::Unreadable(_)));
    }
}
