"""Tests for mcplite.schema.uritemplate: RFC 6570 expansion examples, parse errors, and matching."""

from typing import Any, Dict, Optional

import pytest

from mcplite.schema.uritemplate import URITemplate, is_template

# The variables of RFC 6570 sections 1.2 and 3.2 (mappings keep the RFC's semi, dot, comma order).
RFC_VALUES: Dict[str, Any] = {
    "count": ["one", "two", "three"],
    "dom": ["example", "com"],
    "dub": "me/too",
    "hello": "Hello World!",
    "half": "50%",
    "var": "value",
    "who": "fred",
    "base": "http://example.com/home/",
    "path": "/foo/bar",
    "list": ["red", "green", "blue"],
    "keys": {"semi": ";", "dot": ".", "comma": ","},
    "v": "6",
    "x": "1024",
    "y": "768",
    "empty": "",
    "empty_keys": {},
    "undef": None,
}

# RFC 6570 section 1.2, levels 1 to 4.
LEVEL_EXAMPLES = [
    # Level 1
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    # Level 2
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("X{#var}", "X#value"),
    ("X{#hello}", "X#Hello%20World!"),
    # Level 3
    ("map?{x,y}", "map?1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"),
    ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"),
    ("{#path,x}/here", "#/foo/bar,1024/here"),
    ("X{.var}", "X.value"),
    ("X{.x,y}", "X.1024.768"),
    ("{/var}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
    # Level 4
    ("{var:3}", "val"),
    ("{var:30}", "value"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("{keys}", "semi,%3B,dot,.,comma,%2C"),
    ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+list}", "red,green,blue"),
    ("{+list*}", "red,green,blue"),
    ("{+keys}", "semi,;,dot,.,comma,,"),
    ("{+keys*}", "semi=;,dot=.,comma=,"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("{#list}", "#red,green,blue"),
    ("{#list*}", "#red,green,blue"),
    ("{#keys}", "#semi,;,dot,.,comma,,"),
    ("{#keys*}", "#semi=;,dot=.,comma=,"),
    ("X{.var:3}", "X.val"),
    ("X{.list}", "X.red,green,blue"),
    ("X{.list*}", "X.red.green.blue"),
    ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
    ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
    ("{/var:1,var}", "/v/value"),
    ("{/list}", "/red,green,blue"),
    ("{/list*}", "/red/green/blue"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
    ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
    ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
    ("{;hello:5}", ";hello=Hello"),
    ("{;list}", ";list=red,green,blue"),
    ("{;list*}", ";list=red;list=green;list=blue"),
    ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
    ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
    ("{?var:3}", "?var=val"),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
    ("{&var:3}", "&var=val"),
    ("{&list}", "&list=red,green,blue"),
    ("{&list*}", "&list=red&list=green&list=blue"),
    ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
    ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
]

# RFC 6570 section 3.2 examples not already in the level tables above.
SECTION_3_EXAMPLES = [
    # 3.2.1 Variable expansion
    ("{count}", "one,two,three"),
    ("{count*}", "one,two,three"),
    ("{/count}", "/one,two,three"),
    ("{/count*}", "/one/two/three"),
    ("{;count}", ";count=one,two,three"),
    ("{;count*}", ";count=one;count=two;count=three"),
    ("{?count}", "?count=one,two,three"),
    ("{?count*}", "?count=one&count=two&count=three"),
    ("{&count*}", "&count=one&count=two&count=three"),
    # 3.2.2 Simple string expansion
    ("{half}", "50%25"),
    ("O{empty}X", "OX"),
    ("O{undef}X", "OX"),
    ("{x,y}", "1024,768"),
    ("?{x,empty}", "?1024,"),
    ("?{x,undef}", "?1024"),
    ("?{undef,y}", "?768"),
    # 3.2.3 Reserved expansion
    ("{+half}", "50%25"),
    ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"),
    ("{+base}index", "http://example.com/home/index"),
    ("O{+empty}X", "OX"),
    ("O{+undef}X", "OX"),
    ("up{+path}{var}/here", "up/foo/barvalue/here"),
    # 3.2.4 Fragment expansion
    ("{#var}", "#value"),
    ("{#hello}", "#Hello%20World!"),
    ("{#half}", "#50%25"),
    ("foo{#empty}", "foo#"),
    ("foo{#undef}", "foo"),
    # 3.2.5 Label expansion with dot-prefix
    ("{.who}", ".fred"),
    ("{.who,who}", ".fred.fred"),
    ("{.half,who}", ".50%25.fred"),
    ("www{.dom*}", "www.example.com"),
    ("X{.empty}", "X."),
    ("X{.undef}", "X"),
    ("X{.empty_keys}", "X"),
    ("X{.empty_keys*}", "X"),
    # 3.2.6 Path segment expansion
    ("{/who}", "/fred"),
    ("{/who,who}", "/fred/fred"),
    ("{/half,who}", "/50%25/fred"),
    ("{/who,dub}", "/fred/me%2Ftoo"),
    ("{/var,empty}", "/value/"),
    ("{/var,undef}", "/value"),
    # 3.2.7 Path-style parameter expansion
    ("{;who}", ";who=fred"),
    ("{;half}", ";half=50%25"),
    ("{;empty}", ";empty"),
    ("{;v,empty,who}", ";v=6;empty;who=fred"),
    ("{;v,bar,who}", ";v=6;who=fred"),
    ("{;x,y,undef}", ";x=1024;y=768"),
    # 3.2.8 Form-style query expansion
    ("{?who}", "?who=fred"),
    ("{?half}", "?half=50%25"),
    ("{?x,y,undef}", "?x=1024&y=768"),
    # 3.2.9 Form-style query continuation
    ("{&who}", "&who=fred"),
    ("{&half}", "&half=50%25"),
    ("{&x,y,undef}", "&x=1024&y=768"),
]


@pytest.mark.parametrize("template, expected", LEVEL_EXAMPLES + SECTION_3_EXAMPLES)
def test_rfc6570_examples(template: str, expected: str) -> None:
    assert URITemplate(template).expand(RFC_VALUES) == expected


def test_expansion_encodes_utf8_and_keeps_triplets_only_in_reserved_modes() -> None:
    values = {"q": "caf\u00e9 \u20ac", "raw": "a%20b%zz"}
    assert URITemplate("{q}").expand(values) == "caf%C3%A9%20%E2%82%AC"
    assert URITemplate("{raw}").expand(values) == "a%2520b%25zz"
    assert URITemplate("{+raw}").expand(values) == "a%20b%25zz"
    assert URITemplate("{#raw}").expand(values) == "#a%20b%25zz"


def test_prefix_counts_characters_not_bytes() -> None:
    assert URITemplate("{q:2}").expand({"q": "\u00e9t\u00e9"}) == "%C3%A9t"


def test_literals_not_allowed_in_uris_are_encoded() -> None:
    assert URITemplate("my docs/{name}").expand({"name": "a b"}) == "my%20docs/a%20b"
    assert URITemplate("caf\u00e9/{x}?a=b").expand({"x": 1}) == "caf%C3%A9/1?a=b"


def test_non_string_values() -> None:
    template = URITemplate("{?n,f,on,off}")
    assert template.expand({"n": 3, "f": 1.5, "on": True, "off": False}) == "?n=3&f=1.5&on=true&off=false"
    assert URITemplate("{/list*}").expand({"list": (1, None, "b")}) == "/1/b"
    assert URITemplate("{?keys*}").expand({"keys": {"a": 1, "b": None}}) == "?a=1"
    assert URITemplate("x{?keys*}").expand({"keys": {"b": None}}) == "x"


def test_missing_variables_are_undefined() -> None:
    assert URITemplate("weather://{city}/current{?units}").expand({"city": "Paris"}) == "weather://Paris/current"


@pytest.mark.parametrize("template", ["{keys:1}", "{+keys:1}", "{list:1}"])
def test_prefix_on_composite_value_is_an_error(template: str) -> None:
    with pytest.raises(ValueError):
        URITemplate(template).expand(RFC_VALUES)


@pytest.mark.parametrize(
    "template",
    [
        "{/id*",
        "/id*}",
        "{/?id}",
        "{var:prefix}",
        "{hello:2*}",
        "{??hello}",
        "{!hello}",
        "{=path}",
        "{$var}",
        "{|var*}",
        "{*keys?}",
        "{?empty=default,var}",
        "{var}{-prefix|/-/|var}",
        "?q={searchTerms}&amp;c={example:color?}",
        "x{?empty|foo=none}",
        "/h{#hello+}",
        "/h#{hello+}",
        "{;keys:1*}",
        "?{-join|&|var,list}",
        "/people/{~thing}",
        "/sparql{?query){&default-graph-uri*}",
        "/resolution{?x, y}",
        "{}",
        "{var:0}",
        "{var:10000}",
        "{var:01}",
        "{a..b}",
        "{a.}",
        "{x,}",
        "{a{b}",
        "a}{b}",
    ],
)
def test_malformed_templates_are_rejected(template: str) -> None:
    with pytest.raises(ValueError):
        URITemplate(template)


def test_accepted_variable_names_and_modifiers() -> None:
    template = URITemplate("{a.b,c_1,%C3%A9,x:9999}{/list*}")
    assert template.variables == ["a.b", "c_1", "%C3%A9", "x", "list"]


def test_variables_in_order_of_first_appearance() -> None:
    template = URITemplate("weather://{city}/{day}{?units,city}{&lang}")
    assert template.variables == ["city", "day", "units", "lang"]
    assert URITemplate("plain://no/vars").variables == []


def test_str_and_repr() -> None:
    template = URITemplate("test://template/{id}/data")
    assert str(template) == "test://template/{id}/data"
    assert repr(template) == "URITemplate('test://template/{id}/data')"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("test://template/{id}/data", True),
        ("weather://x/current{?units}", True),
        ("file:///plain.txt", False),
        ("a{}b", False),
        ("a{b", False),
    ],
)
def test_is_template(text: str, expected: bool) -> None:
    assert is_template(text) is expected


# -- matching ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "template, uri, expected",
    [
        ("test://template/{id}/data", "test://template/123/data", {"id": "123"}),
        ("test://template/{id}/data", "test://template/a%2Fb%20c/data", None),  # %2F is "/": not one segment
        ("test://template/{id}/data", "test://template/a%3Fb%20c/data", {"id": "a?b c"}),
        ("test://template/{id}/data", "test://template//data", {"id": ""}),
        ("test://template/{id}/data", "test://template/1/2/data", None),
        ("test://template/{id}/data", "test://template/123/other", None),
        ("test://template/{id}/data", "test://other/123/data", None),
        ("test://template/{id}/data", "test://template/123/data/", None),
        ("file:///{path}", "file:///notes.txt", {"path": "notes.txt"}),
        ("file:///{path}", "file:///dir/notes.txt", None),
        ("file:///{+path}", "file:///dir/sub/notes.txt", {"path": "dir/sub/notes.txt"}),
        ("weather://{city}/current{?units}", "weather://london/current", {"city": "london"}),
        ("weather://{city}/current{?units}", "weather://new%20york/current?units=metric",
         {"city": "new york", "units": "metric"}),
        ("weather://{city}/current{?units}", "weather://london/current?units=", {"city": "london", "units": ""}),
        ("weather://{city}/current{?units}", "weather://london/current?other=1", None),
        ("weather://{city}/current{?units}", "weather://london/current?units=a&units=b", None),
        ("weather://{city}/current{?units}", "weather://london/forecast", None),
        ("search{?q,lang}{&page}", "search?page=2&lang=en&q=a%26b", {"q": "a&b", "lang": "en", "page": "2"}),
        ("search{?q,lang}", "search?lang=en", {"lang": "en"}),
        ("?fixed=yes{&x,y}", "?fixed=yes&y=768&x=1024", {"x": "1024", "y": "768"}),
        ("repo://{owner}/{name}{/path*}", "repo://me/proj/src/main.py", {"owner": "me", "name": "proj",
                                                                         "path": ["src", "main.py"]}),
        ("repo://{owner}/{name}{/path*}", "repo://me/proj", {"owner": "me", "name": "proj"}),
        ("{/path*}/raw", "/a/b/raw", {"path": ["a", "b"]}),
        ("{/list*,path:4}", "/red/green/blue/%2Ffoo", None),  # a segment's value never holds "/" (%2F)
        ("{/a,b}", "/x/y/z", None),
        ("tags{?tag*}", "tags?tag=a&tag=b%20c", {"tag": ["a", "b c"]}),
        ("{;x,y}", ";y=768;x=1024", {"x": "1024", "y": "768"}),
        ("{;x,empty}", ";x=1;empty", {"x": "1", "empty": ""}),
        ("map?{x,y}", "map?1024,768", {"x": "1024", "y": "768"}),
        ("{x,y}", "1024", {"x": "1024"}),
        ("{x,y}", "1,2,3", {"x": "1", "y": "2,3"}),  # surplus values join the last variable
        ("X{.a,b}", "X.v1.tar.gz", {"a": "v1", "b": "tar.gz"}),
        ("{list}", "red,green,blue", {"list": "red,green,blue"}),
        ("{list*}", "red,green,blue", {"list": ["red", "green", "blue"]}),
        ("{+base}index", "http://example.com/home/index", {"base": "http://example.com/home/"}),
        ("X{#frag}", "X#a/b?c#d", {"frag": "a/b?c#d"}),
        ("X{#frag}", "X", {}),
        ("www{.dom*}", "www.example.com", {"dom": ["example", "com"]}),
        ("{name}{.ext}", "report.pdf", {"name": "report", "ext": "pdf"}),
        ("{x}/{x}", "a/a", {"x": "a"}),
        ("{x}/{x}", "a/b", None),
        ("{/keys*}", "/semi=%3B/dot=.", {"keys": ["semi=;", "dot=."]}),
        ("{?keys*}", "?semi=%3B", None),
        ("plain://no/vars", "plain://no/vars", {}),
        ("plain://no/vars", "plain://no/vars2", None),
        ("my docs/{name}", "my%20docs/x", {"name": "x"}),
    ],
)
def test_match(template: str, uri: str, expected: Optional[Dict[str, Any]]) -> None:
    assert URITemplate(template).match(uri) == expected


def test_literal_regex_characters_are_matched_literally() -> None:
    template = URITemplate("a.b+c(d)/{x}")
    assert template.match("a.b+c(d)/1") == {"x": "1"}
    assert template.match("aXb+c(d)/1") is None


ROUND_TRIP_CASES = [
    ("test://template/{id}/data", {"id": "caf\u00e9 ?#&=,;%"}),
    ("file:///{+path}", {"path": "dir/sub dir/n\u00f6tes.txt"}),
    ("weather://{city}/current{?units}", {"city": "S\u00e3o Paulo", "units": "imperial"}),
    ("weather://{city}/current{?units}", {"city": "Oslo"}),
    ("search{?q,lang,page}", {"q": "a=b&c d", "page": "2"}),
    ("search{?q}{&page,lang}", {"q": "x", "lang": "fr"}),
    ("{x,hello,y}", {"x": "1024", "hello": "Hello World!", "y": "768"}),
    ("{+x,y}/here", {"x": "/foo/bar", "y": "1024"}),
    ("{#section}", {"section": "intro/part 1"}),
    ("X{.a,b}", {"a": "v1", "b": "v2"}),
    ("X{.a}", {"a": ""}),
    ("{/a,b}/end", {"a": "x y", "b": "z;w"}),
    ("{/segments*}", {"segments": ["a", "b,c", "d e"]}),
    ("{/segments*,last}", {"segments": ["a", "b"], "last": "c"}),
    ("{;a,b,c}", {"a": "1", "b": "", "c": "x;y"}),
    ("items{?tag*}{&limit}", {"tag": ["x", "y z"], "limit": "10"}),
    ("{?empty}", {"empty": ""}),
    ("resource://{server}/{kind}/{id}{?version}", {"server": "s1", "kind": "doc", "id": "42", "version": "3"}),
]


@pytest.mark.parametrize("template, values", ROUND_TRIP_CASES)
def test_expand_then_match_round_trips(template: str, values: Dict[str, Any]) -> None:
    parsed = URITemplate(template)
    uri = parsed.expand(values)
    assert parsed.match(uri) == values, uri


@pytest.mark.parametrize("template, values", [
    ("test://template/{id}/data", {"id": "a/b"}),
    ("X{.a}", {"a": "/etc"}),
    ("{/a,b}/end", {"a": "x", "b": "z/w"}),
    ("{/segments*}", {"segments": ["a", "b/c"]}),
])
def test_a_segment_value_holding_a_slash_expands_but_does_not_match(template: str, values: Dict[str, Any]) -> None:
    # Expansion encodes the "/" (%2F), but a value within one path segment never holds one when matched: a
    # handler would join it into a path ("..%2F..%2Fetc" is "../../etc").
    parsed = URITemplate(template)
    assert "%2F" in parsed.expand(values) and parsed.match(parsed.expand(values)) is None
