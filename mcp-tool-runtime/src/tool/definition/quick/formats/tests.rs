use super::*;

fn check(format: &str, good: &[&str], bad: &[&str]) {
    let Known::Asserted(format) = Format::of(format) else {
        panic!("{format} is not asserted");
    };
    for s in good {
        assert!(format.valid(s), "{} should accept {s:?}", format.name());
    }
    for s in bad {
        assert!(!format.valid(s), "{} should refuse {s:?}", format.name());
    }
}

#[test]
fn dates_and_times_by_rfc_3339() {
    check(
        "date",
        &["1963-06-19", "2020-02-29", "2000-02-29", "0001-01-01"],
        &[
            "2021-02-29",
            "1900-02-29",
            "2020-13-01",
            "2020-04-31",
            "2020-00-10",
            "2020-01-00",
            "1963-6-19",
            "+963-06-19",
            "1963-06-1९",
            "2020-01-01T",
            "",
        ],
    );
    check(
        "time",
        &[
            "08:30:06Z",
            "08:30:06.283185z",
            "23:59:60Z",
            "15:59:60-08:00",
            "08:30:06+23:59",
            "00:00:00-00:00",
        ],
        &[
            "22:59:60Z",
            "23:59:60+01:00",
            "24:00:00Z",
            "08:60:00Z",
            "08:30:06",
            "08:30:06.Z",
            "08:30:06+24:00",
            "08:30:06+01:60",
            "08:30:06 +01:00",
            "8:30:06Z",
            "08:30:06+0100",
            "08:30:06Z ",
            "०8:30:06Z",
        ],
    );
    check(
        "date-time",
        &[
            "1963-06-19T08:30:06.283185Z",
            "1963-06-19t08:30:06z",
            "1990-12-31T15:59:60-08:00",
        ],
        &[
            "1963-06-19 08:30:06Z",
            "1963-06-19T08:30:06",
            "1990-02-31T15:59:59Z",
            "1963-06-19T08:30:06.28123+01:00Z",
            "1963-06-19",
        ],
    );
    check(
        "duration",
        &[
            "P4DT12H30M5S",
            "P4Y",
            "PT0S",
            "P0D",
            "P1M",
            "PT1M",
            "P2W",
            "P1Y1D",
            "PT36H",
        ],
        &[
            "", "P", "PT", "PT1D", "P1D1Y", "P1Y1Y", "P2W1D", "PW", "P1", "1Y", "P1YT", "P 1Y",
            "P1.5Y",
        ],
    );
    check(
        "period",
        &[
            "1963-06-19T08:30:06Z/1963-06-20T08:30:06Z",
            "1963-06-19T08:30:06Z/P1D",
            "P1D/1963-06-19T08:30:06Z",
        ],
        &[
            "1963-06-19T08:30:06Z",
            "P1D/P2D",
            "1963-06-19/1963-06-20",
            "/",
        ],
    );
}

#[test]
fn identifiers_and_addresses() {
    check(
        "uuid",
        &[
            "2eb8aa08-aa98-11ea-b4aa-73b441d16380",
            "2EB8AA08-AA98-11EA-B4AA-73B441D16380",
        ],
        &[
            "2eb8aa08-aa98-11ea-b4aa-73b441d1638",
            "2eb8aa08aa9811eab4aa73b441d16380",
            "2eb8aa08-aa98-11ea-b4aa-73b441d1638g",
            "{2eb8aa08-aa98-11ea-b4aa-73b441d16380}",
            "2eb8aa08-aa98-11ea-b4aa-73b441d16380-",
        ],
    );
    check(
        "ipv4",
        &["192.168.0.1", "0.0.0.0"],
        &["256.0.0.1", "1.2.3", "01.2.3.4", "1.2.3.4 ", "१.2.3.4"],
    );
    check(
        "ipv6",
        &["::1", "fe80::1", "::ffff:192.168.0.1", "1:2:3:4:5:6:7:8"],
        &[
            "12345::",
            ":::",
            "1:2:3:4:5:6:7:8:9",
            "fe80::1%eth0",
            "::1 ",
        ],
    );
    check(
        "hostname",
        &[
            "www.example.com",
            "xn--4gbwdl.xn--wgbh1c",
            "a",
            "example.com.",
        ],
        &[
            "-a.com",
            "a-.com",
            "a..com",
            "",
            "ex ample.com",
            "é.com",
            &"a".repeat(64),
        ],
    );
}

#[test]
fn uris_by_rfc_3986() {
    let uris = [
        "http://foo.bar/?baz=qux#quux",
        "http://foo.com/blah_(wiki)#cite-1",
        "http://foo.bar/?q=Test%20URL-encoded%20stuff",
        "http://xn--nw2a.xn--j6w193g/",
        "http://-.~_!$&'()*+,;=:%40:80%2f::::::@example.com",
        "http://223.255.255.254",
        "ftp://ftp.is.co.za/rfc/rfc1808.txt",
        "http://[2001:db8::7]:8080/c=GB?objectClass?one",
        "http://[v7.fe80::a+en1]/",
        "mailto:John.Doe@example.com",
        "news:comp.infosystems.www.servers.unix",
        "urn:oasis:names:specification:docbook:dtd:xml:4.1.2",
        "tel:+1-816-555-1212",
        "file:///etc/hosts",
        "http://host:/",
    ];
    let relative = [
        "/abc",
        "//foo.bar/?baz=qux#quux",
        "#fragment",
        "",
        "a/b:c",
        "?q",
        "../x",
    ];
    let neither = [
        "\\\\WINDOWS\\fileshare",
        "abc def",
        "http:// shouldfail.com",
        ":// should fail",
        "http://foo.bar/?baz=qux#quu#x",
        "http://[2001:db8::7/",
        "http://a:b@c@d/",
        "http://host:80a/",
        "http://ex%zzample.com",
        "http://a%2/",
        "1a:b",
        "http://é.com",
        "http://[::1]x/",
    ];
    let mut bad_uris = relative.to_vec();
    bad_uris.extend(neither);
    check("uri", &uris, &bad_uris);
    let mut references = uris.to_vec();
    references.extend(relative);
    check("uri-reference", &references, &neither);
}

#[test]
fn pointers_and_patterns() {
    check(
        "json-pointer",
        &["", "/", "/foo/0", "/a~1b", "/m~0n", "/ ", "/é"],
        &["foo", "/~", "/~2", "/a~", "#/a"],
    );
    check(
        "relative-json-pointer",
        &["0", "1/foo", "0#", "120/a~1b"],
        &["", "01/a", "-1/a", "/a", "1#/a", "0##"],
    );
    check("regex", &["^[a-z]+$", r"\d{2,}"], &["(", "[a-", "a{2,1}"]);
}

#[test]
fn what_the_rules_do_not_assert() {
    for name in [
        "ip",
        "partial-date-time",
        "zoned-date-time",
        "double",
        "anything",
    ] {
        assert!(matches!(Format::of(name), Known::Annotation), "{name}");
    }
    for name in [
        "idn-hostname",
        "idn-email",
        "iri",
        "iri-reference",
        "uri-template",
    ] {
        assert!(matches!(Format::of(name), Known::Elsewhere), "{name}");
    }
}
