// `rose view`'s page: selection, search and the URL fragment (#q=word&lesson=n_...).
// The graph is drawn by the page as written; this only marks it. Lesson text is untrusted:
// it reaches the DOM through textContent alone, never as markup.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("rose-data").textContent);
  var byId = {};
  data.lessons.forEach(function (l) {
    l.haystack = [l.title, l.gist, l.body].join("\n").toLowerCase();
    byId[l.id] = l;
  });
  var input = document.getElementById("q");
  var count = document.getElementById("count");
  var detail = document.getElementById("detail");
  var nodes = Array.prototype.slice.call(document.querySelectorAll(".node[data-id]"));
  var edges = Array.prototype.slice.call(document.querySelectorAll("[data-edge]"));
  var selected = "";

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function go(id) {
    var b = el("button", "go", byId[id] ? byId[id].title + " (" + id + ")" : id);
    b.type = "button";
    b.addEventListener("click", function () { select(id, true); });
    return b;
  }

  function section(title, body) {
    detail.appendChild(el("h3", "", title));
    detail.appendChild(body);
  }

  function list(items, render) {
    var ul = el("ul");
    items.forEach(function (item) {
      var li = el("li");
      render(item, li);
      ul.appendChild(li);
    });
    return ul;
  }

  function show(id) {
    while (detail.firstChild) detail.removeChild(detail.firstChild);
    var l = byId[id];
    if (!l) {
      detail.appendChild(el("p", "hint", data.lessons.length ? "Select a lesson to see it in full." : "Nothing to show yet."));
      return;
    }
    detail.appendChild(el("h2", "title", l.title));
    detail.appendChild(el("p", "meta", "L" + l.level + " · " + l.family + " · " + l.status +
      (l.origin ? " · " + l.origin : "") + " · " + l.tokens + " tok · " + l.id));
    if (l.gist) section("Gist", el("p", "gist", l.gist));
    section("Body", el("pre", "body", l.body || "(no body)"));
    section("From", el("p", "provenance", l.from));
    if (l.held) section("Held for review", el("p", "held", l.held));
    if (l.conflict || l.disputes.length) {
      var c = el("div", "conflict");
      if (l.conflict) c.appendChild(el("p", "", l.conflict));
      if (l.disputes.length) {
        c.appendChild(el("p", "meta", "disputes"));
        c.appendChild(list(l.disputes, function (d, li) { li.appendChild(go(d)); }));
      }
      section("Conflict", c);
    }
    var r = l.record, dl = el("dl", "record");
    [["attempts", r.attempts], ["successes", r.successes], ["failures", r.failures],
     ["rescues", r.rescues], ["expansions", r.expansions], ["last used", l.last_used || "never"]]
      .forEach(function (kv) { dl.appendChild(el("dt", "", kv[0])); dl.appendChild(el("dd", "", kv[1])); });
    section("Record", dl);
    if (l.dropped.length) {
      section("Dropped", list(l.dropped, function (c, li) {
        li.appendChild(el("span", "claim", c.kind + ": " + c.claim));
        li.appendChild(el("span", "meta", " held by "));
        li.appendChild(go(c.holder));
        li.appendChild(el("span", "meta", " · rescued " + c.rescues));
      }));
    }
    if (l.patches.length) {
      section("Patches", list(l.patches, function (p, li) {
        li.appendChild(el("span", "patch", p.claim));
        li.appendChild(el("span", "meta", " · rescued " + p.rescues));
      }));
    }
    if (l.parents.length) {
      section("Parents", list(l.parents, function (p, li) { li.appendChild(go(p)); }));
    }
    if (l.children.length) {
      section("Derived from", list(l.children, function (p, li) { li.appendChild(go(p)); }));
    }
  }

  function select(id, remember) {
    selected = byId[id] ? id : "";
    nodes.forEach(function (n) { n.classList.toggle("selected", n.dataset.id === selected); });
    edges.forEach(function (e) {
      e.classList.toggle("lit", !!selected && (e.dataset.parent === selected || e.dataset.child === selected));
    });
    show(selected);
    if (selected) {
      var box = document.getElementById("node-" + selected);
      if (box && box.scrollIntoView) box.scrollIntoView({ block: "nearest", inline: "nearest" });
    }
    if (remember) keep();
  }

  function filter(query) {
    var words = query.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0, dim = {};
    nodes.forEach(function (n) {
      var l = byId[n.dataset.id];
      var hit = words.every(function (w) { return l.haystack.indexOf(w) >= 0; });
      n.classList.toggle("dim", !hit);
      n.dataset.match = hit ? "yes" : "no";
      if (hit) shown += 1; else dim[n.dataset.id] = true;
    });
    edges.forEach(function (e) { e.classList.toggle("dim", !!(dim[e.dataset.parent] || dim[e.dataset.child])); });
    count.textContent = words.length ? shown + " of " + nodes.length + " lessons match" : "";
  }

  function fragment() {
    var out = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (pair) {
      if (!pair) return;
      var i = pair.indexOf("="), key = i < 0 ? pair : pair.slice(0, i), value = i < 0 ? "" : pair.slice(i + 1);
      try { out[decodeURIComponent(key)] = decodeURIComponent(value.replace(/\+/g, " ")); } catch (e) { /* a bad escape */ }
    });
    return out;
  }

  function keep() {
    var parts = [];
    if (input.value) parts.push("q=" + encodeURIComponent(input.value));
    if (selected) parts.push("lesson=" + encodeURIComponent(selected));
    try { history.replaceState(null, "", parts.length ? "#" + parts.join("&") : location.pathname + location.search); } catch (e) { /* file: URLs in some browsers */ }
  }

  function follow() {
    var f = fragment();
    input.value = f.q || "";
    filter(input.value);
    select(f.lesson || selected, false);
  }

  nodes.forEach(function (n) {
    n.addEventListener("click", function () { select(n.dataset.id, true); });
    n.addEventListener("keydown", function (e) {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); select(n.dataset.id, true); }
    });
  });
  input.addEventListener("input", function () { filter(input.value); keep(); });
  window.addEventListener("hashchange", follow);
  follow();
})();
