//! The URI templates `#[resource_template("…")]` accepts: literal text and `{name}`
//! variables (RFC 6570 level 1), a literal between any two variables (the server tells where a
//! variable ends by the text after it), each variable once. RFC 6570's operators and
//! modifiers (`{+path}`, `{?q}`, `{id*}`) are refused: the server does not match them.

/// The variables of a well-formed template, in order; else what is wrong with it.
pub(crate) fn variables(template: &str) -> Result<Vec<String>, String> {
    if template.trim().is_empty() {
        return Err("a URI template cannot be empty".into());
    }
    let mut vars: Vec<String> = Vec::new();
    let mut rest = template;
    // Whether literal text came since the last variable.
    let mut literal_since = true;
    while !rest.is_empty() {
        let Some(open) = rest.find(['{', '}']) else {
            break;
        };
        if rest[open..].starts_with('}') {
            return Err("`}` without a `{` before it".into());
        }
        if open > 0 {
            literal_since = true;
        }
        let after = &rest[open + 1..];
        let Some(close) = after.find(['{', '}']) else {
            return Err("a `{` is never closed".into());
        };
        if after[close..].starts_with('{') {
            return Err("a `{` is never closed before the next `{`".into());
        }
        let name = &after[..close];
        variable_problem(name)?;
        if !literal_since {
            let previous = vars.last().map(String::as_str).unwrap_or_default();
            return Err(format!(
                "the variables `{previous}` and `{name}` need text between them: the URI cannot tell where one ends"
            ));
        }
        if vars.iter().any(|v| v == name) {
            return Err(format!("the variable `{name}` appears twice"));
        }
        vars.push(name.to_owned());
        literal_since = false;
        rest = &after[close + 1..];
    }
    if vars.is_empty() {
        return Err(
            "this template has no `{variable}`: a resource with a fixed URI is `#[resource(\"…\")]`"
                .into(),
        );
    }
    Ok(vars)
}

/// Why `name` (between `{` and `}`) is no variable this crate matches.
fn variable_problem(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("`{}` names no variable".into());
    }
    if let Some(op) = name.chars().next().filter(|c| "+#./;?&=,!@|".contains(*c)) {
        return Err(format!(
            "`{{{name}}}`: URI template operators such as `{op}` are not supported; a variable is `{{name}}`"
        ));
    }
    if name.ends_with('*') || name.contains(':') {
        return Err(format!(
            "`{{{name}}}`: URI template modifiers (`*`, `:n`) are not supported; a variable is `{{name}}`"
        ));
    }
    let ok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
    if let Some(bad) = name.chars().find(|c| !ok(*c)) {
        return Err(format!(
            "`{{{name}}}` contains {bad:?}: a variable's name uses `A-Z`, `a-z`, `0-9`, `_` and `.`"
        ));
    }
    if name.starts_with('.') || name.ends_with('.') {
        return Err(format!(
            "`{{{name}}}`: a variable's name cannot start or end with `.`"
        ));
    }
    Ok(())
}

/// Why `uri` is no URI a fixed resource can have, if it is not: it needs a scheme, and no
/// whitespace or braces (a template is `#[resource_template]`'s).
pub(crate) fn uri_problem(uri: &str) -> Option<String> {
    if uri.contains(['{', '}']) {
        return Some(
            "this URI has `{…}`: a family of resources named by a template is `#[resource_template(\"…\")]`"
                .into(),
        );
    }
    scheme_problem(uri).or_else(|| {
        uri.chars()
            .any(char::is_whitespace)
            .then(|| "a URI cannot contain whitespace".into())
    })
}

/// Why `text` does not start with a URI scheme (`scheme:`), if it does not.
pub(crate) fn scheme_problem(text: &str) -> Option<String> {
    let scheme = text.split(':').next().unwrap_or_default();
    let well_formed = text.contains(':')
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    (!well_formed).then(|| {
        format!("`{text}` has no scheme: a resource's URI starts with one, as `docs://readme` does")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_in_order() {
        assert_eq!(variables("users://{id}/profile").unwrap(), ["id"]);
        assert_eq!(
            variables("repo://{owner}/{name}/issues/{number}").unwrap(),
            ["owner", "name", "number"]
        );
        assert_eq!(
            variables("file:///{dir}/{file.ext}").unwrap(),
            ["dir", "file.ext"]
        );
        assert_eq!(variables("x://{a}-{b}").unwrap(), ["a", "b"]);
    }

    #[test]
    fn malformed_templates() {
        for (template, problem) in [
            ("", "cannot be empty"),
            ("users://{id", "never closed"),
            ("users://{i{d}", "never closed before the next"),
            ("users://id}", "without a `{`"),
            ("users://{}", "names no variable"),
            ("users://{+path}", "operators such as `+`"),
            ("users://{?q}", "operators such as `?`"),
            ("users://{id*}", "modifiers"),
            ("users://{id:3}", "modifiers"),
            ("users://{user id}", "contains ' '"),
            ("users://{.id}", "operators such as `.`"),
            ("users://{id.}", "start or end with `.`"),
            ("users://{a}{b}", "`a` and `b` need text between them"),
            ("users://{id}/{id}", "`id` appears twice"),
            ("users://all", "no `{variable}`"),
        ] {
            let e = variables(template).unwrap_err();
            assert!(e.contains(problem), "{template}: {e}");
        }
    }

    #[test]
    fn fixed_uris() {
        for ok in [
            "docs://readme",
            "file:///etc/motd",
            "urn:isbn:0451450523",
            "a+b.c-d:x",
        ] {
            assert_eq!(uri_problem(ok), None, "{ok}");
        }
        for (bad, problem) in [
            ("readme", "no scheme"),
            ("://x", "no scheme"),
            ("1x://y", "no scheme"),
            ("docs://{page}", "`#[resource_template"),
            ("docs://read me", "whitespace"),
        ] {
            let e = uri_problem(bad).unwrap();
            assert!(e.contains(problem), "{bad}: {e}");
        }
    }
}
