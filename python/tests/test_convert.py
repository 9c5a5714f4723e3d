"""Values between PTC-Lisp and Python, both ways, every type."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptc_lisp import Keyword, Opaque, Session

keywords = st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True).map(Keyword)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    keywords,
)
hashables = st.recursive(
    scalars,
    lambda inner: st.one_of(st.tuples(inner, inner), st.frozensets(inner, max_size=3)),
    max_leaves=6,
)


def values(keyword_keys: bool):
    keys = st.one_of(keywords, st.text(max_size=8), st.integers(-5, 5)) if keyword_keys else st.text(max_size=8)
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.sets(hashables, max_size=4),
            st.dictionaries(keys, inner, max_size=4),
        ),
        max_leaves=20,
    )


@settings(max_examples=150, deadline=None)
@given(values(keyword_keys=False))
def test_data_round_trips_through_the_interpreter(value):
    s = Session(data={"v": value})
    assert s.eval("data/v").value == value


@settings(max_examples=150, deadline=None)
@given(values(keyword_keys=True))
def test_keyword_keys_round_trip_exactly(value):
    s = Session(data={"v": value}, keyword_keys=True)
    assert s.eval("data/v").value == value


@settings(max_examples=100, deadline=None)
@given(values(keyword_keys=False))
def test_tool_arguments_and_results_round_trip(value):
    seen = []

    def echo(x):
        seen.append(x)
        return x

    s = Session()
    s.register_tool("echo", "(x :any?) -> :any", echo)
    s.set_data({"v": value})
    t = s.eval("(= data/v (tool/echo {:x data/v}))")
    assert t.value is True, t.error
    assert seen == [value]


def test_each_type_maps_as_documented():
    s = Session()
    v = s.eval('[nil true 1 1.5 "s" :k [1] (list 1 2) #{1} {:a 1 "b" 2 3 4} #{[1 2]} {[1] :v}]').value
    assert v == [None, True, 1, 1.5, "s", Keyword("k"), [1], [1, 2], {1}, {"a": 1, "b": 2, 3: 4},
                 {(1, 2)}, {(1,): Keyword("v")}]
    assert type(v[8]) is set and type(v[10]) is set and type(next(iter(v[10]))) is tuple
    nested = s.eval("#{#{1}}").value
    assert nested == {frozenset({1})}
    kept = Session(keyword_keys=True).eval('{:a 1 "b" 2}').value
    assert kept == {Keyword("a"): 1, "b": 2}


def test_keywords():
    assert Keyword(":a") == Keyword("a") and hash(Keyword("a")) == hash(Keyword(":a"))
    assert Keyword("a") != "a" and str(Keyword("a")) == ":a" and repr(Keyword("a")) == 'Keyword("a")'
    assert Keyword("a").name == "a"
    with pytest.raises(ValueError):
        Keyword("")


def test_values_without_a_python_form_are_opaque():
    s = Session()
    f = s.eval("(fn [x] x)").value
    assert isinstance(f, Opaque) and f.kind == "function"
    assert s.eval("'sym").value.kind == "symbol"
    assert s.eval('(re-pattern "a+")').value.text == '#"a+"'
    with pytest.raises(TypeError, match="cannot be passed back"):
        s.set_data({"f": f})
    with pytest.raises(TypeError, match="no hashable Python form"):
        s.eval("#{{:a 1}}").value


def test_floats_and_integers_keep_their_kind():
    s = Session()
    assert s.eval("[1 1.0 -0.0]").value == [1, 1.0, -0.0]
    assert isinstance(s.eval("1.0").value, float) and isinstance(s.eval("1").value, int)
    assert math.isinf(Session(data={"x": float("-inf")}).eval("data/x").value)
    assert math.isnan(Session(data={"x": float("nan")}).eval("data/x").value)


def test_what_cannot_cross_is_an_error_naming_its_path():
    with pytest.raises(ValueError, match=r"data/xs\[1\] is the integer 36893488147419103232"):
        Session(data={"xs": [1, 2**65]})
    with pytest.raises(TypeError, match=r"data/m.when is a Python `datetime`"):
        import datetime

        Session(data={"m": {"when": datetime.datetime.now()}})
    deep = []
    cur = deep
    for _ in range(2000):
        cur.append([])
        cur = cur[0]
    with pytest.raises(ValueError, match="nested more than 1000 levels"):
        Session(data={"d": deep})
    cyclic = []
    cyclic.append(cyclic)
    with pytest.raises(ValueError, match="contains itself"):
        Session(data={"c": cyclic})
    with pytest.raises(TypeError, match="data keys must be strings"):
        Session().set_data({1: 2})


def test_shared_structure_cannot_expand_without_bound():
    s = Session(timeout_ms=5000)
    t = s.eval("(reduce (fn [v _] [v v]) [1] (range 40))")
    assert t.success
    with pytest.raises(ValueError, match="max_expanded"):
        t.value
