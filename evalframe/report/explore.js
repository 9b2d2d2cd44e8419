/* evalframe report.html explorer: filter, page and compare the embedded units. No network, no library.
   The data is the JSON of evalframe.report.explore.explorer_json; the filters live in the URL fragment
   (#task=..&candidate=..&outcome=..&slice.NAME=..&q=..&page=..&a=..&b=..&diff=1), so a view can be shared
   and survives a reload. Every data string is set as text (textContent), never as HTML. */
(function () {
  "use strict";
  var root = document.getElementById("ef-explorer");
  var source = document.getElementById("ef-data");
  if (!root || !source) { return; }
  var D = JSON.parse(source.textContent);
  var C = D.columns, N = D.rows, PAGE = 50;
  var hasTask = !!C.task, SLICES = D.slices;
  var state = {};

  function coded(name) { return !!C[name] && !Array.isArray(C[name]); }
  function values(name) { return coded(name) ? C[name].values : []; }
  function text(name, i) {
    var c = C[name];
    if (!c) { return ""; }
    if (coded(name)) { return c.codes[i] === null ? "" : c.values[c.codes[i]]; }
    return c[i] === null ? "" : String(c[i]);
  }
  function make(tag, attrs, kids) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") { e.textContent = attrs[k]; } else { e.setAttribute(k, attrs[k]); }
    });
    (kids || []).forEach(function (k) { e.appendChild(k); });
    return e;
  }
  function select(key, label, options) {
    var s = make("select", { id: "ef-" + key.replace(".", "-"), "data-key": key, "aria-label": label });
    s.appendChild(make("option", { value: "", text: "all " + label }));
    options.forEach(function (o) { s.appendChild(make("option", { value: o, text: o })); });
    s.addEventListener("change", function () { set(key, s.value); });
    return make("label", {}, [document.createTextNode(label + " "), s]);
  }

  /* --- the URL fragment ------------------------------------------------------------------------ */
  function parse(hash) {
    var out = {};
    hash.replace(/^#/, "").split("&").forEach(function (part) {
      var i = part.indexOf("=");
      if (i > 0) { out[decodeURIComponent(part.slice(0, i))] = decodeURIComponent(part.slice(i + 1)); }
    });
    return out;
  }
  function fragment() {
    return "#" + Object.keys(state).filter(function (k) { return state[k] !== ""; }).map(function (k) {
      return encodeURIComponent(k) + "=" + encodeURIComponent(state[k]);
    }).join("&");
  }
  function set(key, value) {
    state[key] = value;
    if (key !== "page") { state.page = ""; }
    if (key !== "ppage" && key !== "page") { state.ppage = ""; }
    history.replaceState(null, "", fragment());
    render();
  }

  /* --- filtering --------------------------------------------------------------------------------- */
  function codeOf(name, value) { return values(name).indexOf(value); }
  function matcher(withUnitFilters) {
    var tests = [];
    function byCode(name, key) {
      if (!state[key]) { return; }
      var want = codeOf(name, state[key]), codes = C[name] ? C[name].codes : null;
      tests.push(function (i) { return codes !== null && codes[i] === want; });
    }
    if (hasTask) { byCode("task", "task"); }
    SLICES.forEach(function (s) { byCode(s, "slice." + s); });
    if (state.q) {
      var q = state.q.toLowerCase(), hit = values("case_id").map(function (v) {
        return v.toLowerCase().indexOf(q) >= 0;
      });
      tests.push(function (i) { return hit[C.case_id.codes[i]]; });
    }
    if (withUnitFilters) {
      byCode("candidate", "candidate");
      if (state.outcome) {
        var allowed = (D.groups[state.outcome] || []).map(function (o) { return codeOf("outcome", o); });
        tests.push(function (i) { return allowed.indexOf(C.outcome.codes[i]) >= 0; });
      }
    }
    return function (i) {
      for (var t = 0; t < tests.length; t++) { if (!tests[t](i)) { return false; } }
      return true;
    };
  }

  function symbol(outcome) {
    return make("span", { "class": "sym o-" + outcome, title: outcome + ": " + (D.meaning[outcome] || ""),
      text: D.symbol[outcome] || "?" });
  }
  function pager(key, count, into) {
    var pages = Math.max(1, Math.ceil(count / PAGE)), page = Math.min(Math.max(1, +state[key] || 1), pages);
    var prev = make("button", { type: "button", "data-pager": key + "-prev", text: "‹ previous" });
    var next = make("button", { type: "button", "data-pager": key + "-next", text: "next ›" });
    prev.disabled = page <= 1; next.disabled = page >= pages;
    prev.addEventListener("click", function () { set(key, String(page - 1)); });
    next.addEventListener("click", function () { set(key, String(page + 1)); });
    into.appendChild(make("div", { "class": "pager" }, [prev,
      make("span", { text: " page " + page + " of " + pages + " " }), next]));
    return (page - 1) * PAGE;
  }

  /* --- the units table ----------------------------------------------------------------------------- */
  function unitsTable(into) {
    var keep = matcher(true), rows = [];
    for (var i = 0; i < N; i++) { if (keep(i)) { rows.push(i); } }
    var said = make("p", {}, [make("b", { id: "ef-count", text: String(rows.length) }),
      document.createTextNode(" units match" + (D.total > N ? " among the " + N + " embedded (of " + D.total +
        "; units.parquet holds every unit)" : ""))]);
    into.appendChild(said);
    var first = pager("page", rows.length, into);
    var cols = (hasTask ? ["task"] : []).concat(["candidate", "case_id", "trial", "outcome"], SLICES);
    var head = make("tr", {}, cols.map(function (c) { return make("th", { text: c }); }));
    var body = make("tbody", {}, rows.slice(first, first + PAGE).map(function (i) {
      return make("tr", {}, cols.map(function (c) {
        if (c !== "outcome") { return make("td", { text: text(c, i) }); }
        var o = text("outcome", i);
        return make("td", {}, [symbol(o), document.createTextNode(" " + o)]);
      }));
    }));
    into.appendChild(make("div", { "class": "scroll" },
      [make("table", { id: "ef-units" }, [make("thead", {}, [head]), body])]));
  }

  /* --- two candidates side by side, per case ------------------------------------------------------- */
  function sideBySide(into) {
    var names = values("candidate");
    if (names.length < 2) { return; }
    var a = names.indexOf(state.a) >= 0 ? state.a : names[0];
    var b = names.indexOf(state.b) >= 0 ? state.b : names[1];
    var ca = codeOf("candidate", a), cb = codeOf("candidate", b), keep = matcher(false);
    var cases = {}, order = [];
    for (var i = 0; i < N; i++) {
      var c = C.candidate.codes[i];
      if ((c !== ca && c !== cb) || !keep(i)) { continue; }
      var key = text("task", i) + "\u0000" + text("case_id", i);
      if (!cases[key]) { cases[key] = { task: text("task", i), id: text("case_id", i), a: [], b: [] }; order.push(key); }
      (c === ca ? cases[key].a : cases[key].b).push([+C.trial[i], text("outcome", i)]);
    }
    function seq(trials) {
      return trials.slice().sort(function (x, y) { return x[0] - y[0]; }).map(function (t) { return t[1]; });
    }
    var listed = order.map(function (k) { return cases[k]; }).map(function (r) {
      r.sa = seq(r.a); r.sb = seq(r.b); r.differs = r.sa.join(",") !== r.sb.join(","); return r;
    }).filter(function (r) { return state.diff !== "1" || r.differs; });
    var pick = function (key, label, chosen) {
      var l = select(key, label, names);
      l.querySelector("select").value = chosen;
      return l;
    };
    var box = make("input", { type: "checkbox", id: "ef-diff" });
    box.checked = state.diff === "1";
    box.addEventListener("change", function () { set("diff", box.checked ? "1" : ""); });
    into.appendChild(make("h3", { text: "Two candidates side by side, per case" }));
    into.appendChild(make("div", { "class": "filters" }, [pick("a", "left", a), pick("b", "right", b),
      make("label", {}, [box, document.createTextNode(" different only (flips: the trials' outcomes differ)")])]));
    into.appendChild(make("p", {}, [make("b", { id: "ef-pairs-count", text: String(listed.length) }),
      document.createTextNode(" cases listed; k/n = passed trials / trials of the case")]));
    var first = pager("ppage", listed.length, into);
    function side(outcomes) {
      var k = outcomes.filter(function (o) { return o === "passed"; }).length;
      return make("td", {}, [make("b", { text: k + "/" + outcomes.length + " " })].concat(outcomes.map(symbol)));
    }
    var cols = (hasTask ? ["task"] : []).concat(["case_id", a, b]);
    var body = make("tbody", {}, listed.slice(first, first + PAGE).map(function (r) {
      var cells = (hasTask ? [make("td", { text: r.task })] : []).concat([make("td", { text: r.id }),
        side(r.sa), side(r.sb)]);
      return make("tr", { "class": r.differs ? "differs" : "" }, cells);
    }));
    into.appendChild(make("div", { "class": "scroll" }, [make("table", { id: "ef-pairs" },
      [make("thead", {}, [make("tr", {}, cols.map(function (c) { return make("th", { text: c }); }))]), body])]));
  }

  /* --- the whole explorer -------------------------------------------------------------------------- */
  function render() {
    root.textContent = "";
    var outcomes = Object.keys(D.groups);
    var filters = (hasTask ? [select("task", "task", values("task"))] : []).concat(
      [select("candidate", "candidate", values("candidate")), select("outcome", "outcome", outcomes)],
      SLICES.map(function (s) { return select("slice." + s, s, values(s)); }));
    var search = make("input", { type: "search", id: "ef-q", placeholder: "case id contains", "aria-label": "case id" });
    search.value = state.q || "";
    search.addEventListener("change", function () { set("q", search.value); });
    filters.push(make("label", {}, [document.createTextNode("case id "), search]));
    var reset = make("button", { type: "button", id: "ef-reset", text: "clear filters" });
    reset.addEventListener("click", function () { state = {}; set("page", ""); });
    filters.push(reset);
    root.appendChild(make("div", { "class": "filters" }, filters));
    root.querySelectorAll("select[data-key]").forEach(function (s) {
      var v = state[s.getAttribute("data-key")] || "";
      s.value = v;
      if (s.value !== v) { s.appendChild(make("option", { value: v, text: v })); s.value = v; }
    });
    unitsTable(root);
    sideBySide(root);
    root.setAttribute("data-fragment", location.hash);  /* what the explorer shows (a test waits for it) */
  }

  function fromHash(scroll) {
    if (location.hash.indexOf("=") < 0) { return false; }
    state = parse(location.hash);
    render();
    if (scroll) { document.getElementById("explore").scrollIntoView(); }
    return true;
  }
  window.addEventListener("hashchange", function () { fromHash(true); });
  if (!fromHash(true)) { render(); }
}());
