// vault-agent web page: live updates, search as you type, sections without reloads.
// Every piece of HTML put into the page comes from the server's escaping templates
// (`?part=` fragments); text from live events is set with textContent only.
"use strict";

(function () {
  const body = document.body;
  const signedIn = document.querySelector('meta[name="csrf-token"]').content !== "";
  if (!signedIn) return;

  function partUrl(href, part) {
    const url = new URL(href, location.href);
    url.searchParams.set("part", part);
    url.hash = "";
    return url;
  }

  // Replace a section by its server-rendered fragment, keeping what the person typed.
  async function refresh(el, href, part, signal) {
    const typed = {};
    el.querySelectorAll("textarea, input[type=text], input:not([type])").forEach((f) => {
      if (f.id && f.value) typed[f.id] = f.value;
    });
    const focused = document.activeElement && el.contains(document.activeElement) ? document.activeElement.id : null;
    const response = await fetch(partUrl(href, part), { credentials: "same-origin", signal: signal });
    if (response.status === 401) { location.reload(); return false; }
    el.innerHTML = await response.text();
    Object.entries(typed).forEach(([id, value]) => {
      const f = document.getElementById(id);
      if (f && !f.value) f.value = value;
    });
    if (focused && document.getElementById(focused)) document.getElementById(focused).focus();
    return true;
  }

  function debounce(fn, ms) {
    let timer = null;
    return function (...args) {
      clearTimeout(timer);
      timer = setTimeout(() => fn(...args), ms);
    };
  }

  // ----- the live stream ------------------------------------------------------------------
  const badge = document.getElementById("live-freshness");
  const cid = body.dataset.conversation || null;
  const view = body.dataset.view;
  let shownSnapshot = null;
  const summary = document.getElementById("summary");
  if (summary) {
    const facts = summary.querySelector("[data-snapshot]");
    shownSnapshot = facts ? facts.dataset.snapshot : null;
  }
  const refreshSummary = debounce(() => refresh(summary, "/", "summary"), 200);
  const refreshQuestions = debounce(() => {
    const el = document.getElementById("questions");
    if (el) refresh(el, location.href, "questions");
  }, 150);
  const refreshList = debounce(() => {
    const el = document.getElementById("list");
    if (el) refresh(el, location.href, "list");
  }, 300);

  function addEntry(kind, at, who, text) {
    const list = document.getElementById("entries");
    if (!list) return;
    const li = document.createElement("li");
    li.className = "entry " + kind + " live";
    const time = document.createElement("time");
    time.dateTime = at || "";
    time.textContent = at || "";
    li.appendChild(time);
    const label = document.createElement("span");
    label.className = "who";
    label.textContent = who;
    li.appendChild(label);
    if (text !== null) {
      const quote = document.createElement("blockquote");
      quote.className = "message-text";
      quote.textContent = text;
      li.appendChild(quote);
    }
    list.appendChild(li);
  }

  const stream = new EventSource("/ui/events");
  stream.addEventListener("status", (ev) => {
    const s = JSON.parse(ev.data);
    if (badge) {
      badge.hidden = false;
      badge.textContent = s.error ? s.error : "index " + s.indexFreshness;
      badge.className = "badge " + (s.error ? "error" : s.indexFreshness);
    }
    if (summary && !s.error) {
      const shownState = summary.querySelector("[data-freshness]");
      if (String(s.snapshotId) !== shownSnapshot || !shownState || shownState.textContent !== s.indexFreshness) {
        shownSnapshot = String(s.snapshotId);
        refreshSummary();
      }
    }
  });
  stream.addEventListener("message", (ev) => {
    const m = JSON.parse(ev.data);
    if (cid && m.conversation_id === cid) {
      addEntry("message", m.at, m.priority === "high" ? "Agent (important):" : "Agent:", m.text);
    }
    if (view === "conversations" && !cid) refreshList();
  });
  ["question", "reply"].forEach((kind) => {
    stream.addEventListener(kind, (ev) => {
      const m = JSON.parse(ev.data);
      if (!cid || m.conversation_id === cid) refreshQuestions();
      if (cid && m.conversation_id === cid && kind === "reply") {
        addEntry("reply", m.at, m.reply !== null ? "Answer (" + m.via + "):" : "No answer: " + m.reason + ".", m.reply);
      }
      if (view === "conversations" && !cid) refreshList();
    });
  });

  // ----- search as you type -----------------------------------------------------------------
  const form = document.getElementById("search-form");
  if (form) {
    const results = document.getElementById("results");
    let inflight = null;
    const run = debounce(async () => {
      const url = new URL(form.action, location.href);
      new FormData(form).forEach((value, key) => { if (String(value).trim()) url.searchParams.append(key, value); });
      if (inflight) inflight.abort();
      inflight = new AbortController();
      results.setAttribute("aria-busy", "true");
      try {
        if (await refresh(results, url.href, "results", inflight.signal)) history.replaceState(null, "", url.href);
      } catch (err) {
        if (err.name !== "AbortError") throw err;
      } finally {
        results.setAttribute("aria-busy", "false");
      }
    }, 150);
    form.addEventListener("input", run);
    form.addEventListener("change", run);
  }

  // ----- a note's sections --------------------------------------------------------------------
  const section = document.getElementById("section");
  if (section) {
    document.addEventListener("click", async (ev) => {
      const link = ev.target.closest("a[data-section], a[data-section-more]");
      if (!link || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button !== 0) return;
      ev.preventDefault();
      if (await refresh(section, link.href, "section")) {
        history.pushState(null, "", link.href);
        if (link.hasAttribute("data-section")) {
          document.querySelectorAll("a[data-section]").forEach((a) => a.removeAttribute("aria-current"));
          link.setAttribute("aria-current", "true");
        }
        section.focus();
      }
    });
    window.addEventListener("popstate", () => refresh(section, location.href, "section"));
  }
})();
