// debugrelay's live view: server-sent events replace the rendered parts; nothing else is fetched.
(function () {
  "use strict";
  var body = document.body;
  var OUT_MAX = 200;

  function agoText(seconds) {
    seconds = Math.max(0, seconds);
    if (seconds < 60) return Math.floor(seconds) + " s ago";
    if (seconds < 3600) return Math.floor(seconds / 60) + " min ago";
    return Math.floor(seconds / 3600) + " h ago";
  }
  function refreshAges() {
    var now = Date.now() / 1000;
    document.querySelectorAll("[data-at]").forEach(function (el) {
      el.textContent = agoText(now - parseFloat(el.dataset.at));
    });
  }
  setInterval(refreshAges, 5000);

  // a stop nobody has looked at yet is marked "new stop" until its session page is opened
  function seenKey(sid) { return "debugrelay.seen." + sid; }
  function markUnseen() {
    document.querySelectorAll("[data-stop-seq]").forEach(function (el) {
      var sid = el.dataset.session || body.dataset.session;
      var seq = parseInt(el.dataset.stopSeq, 10);
      var seen = parseInt(localStorage.getItem(seenKey(sid)) || "0", 10);
      var badge = el.querySelector(".unseen");
      if (badge) badge.hidden = !(seq > seen);
      if (body.dataset.view === "session" && document.visibilityState === "visible") {
        localStorage.setItem(seenKey(sid), String(seq));
      }
    });
  }
  document.addEventListener("visibilitychange", markUnseen);

  // expandable values: children fetched when opened; open ones stay open across updates
  var openNames = {};
  document.addEventListener("toggle", function (ev) {
    var d = ev.target;
    if (!d.dataset || !d.dataset.ref) return;
    var key = pathOf(d);
    if (d.open) openNames[key] = true; else delete openNames[key];
    if (d.open && !d.dataset.loaded) load(d);
  }, true);
  function pathOf(d) {
    var names = [];
    for (var el = d; el; el = el.parentElement) {
      if (el.tagName === "DETAILS" && el.dataset.name) names.unshift(el.dataset.name);
    }
    return names.join("/");
  }
  function load(d) {
    d.dataset.loaded = "1";
    var box = d.querySelector(".children");
    fetch("/ui/sessions/" + encodeURIComponent(body.dataset.session) + "/children?ref=" + d.dataset.ref,
          {credentials: "same-origin"})
      .then(function (r) { return r.text(); })
      .then(function (html) { box.innerHTML = html; reopen(box); })
      .catch(function () { box.textContent = "could not be read"; d.dataset.loaded = ""; });
  }
  function reopen(root) {
    root.querySelectorAll("details[data-ref]").forEach(function (d) {
      if (openNames[pathOf(d)]) d.open = true;
    });
  }

  function scrollToCurrent() {
    var cur = document.querySelector("#source .cur");
    var box = document.getElementById("source");
    if (cur && box) box.scrollTop = cur.offsetTop - box.clientHeight / 2;
  }

  function appendOutput(data) {
    var out = document.getElementById("out");
    if (!out) return;
    var atEnd = out.scrollTop + out.clientHeight >= out.scrollHeight - 4;
    if (data.reset) out.innerHTML = "";
    if (data.out) out.insertAdjacentHTML("beforeend", data.out);
    var cut = data.cut;
    while (out.children.length > OUT_MAX) { out.removeChild(out.firstChild); cut = true; }
    if (cut && !document.getElementById("out-cut")) {
      out.insertAdjacentHTML("beforebegin", "<div class=cut id=out-cut>earlier output not shown</div>");
    }
    if (atEnd || data.reset) out.scrollTop = out.scrollHeight;
  }

  // The browser reconnects a stream that ended by itself (retry: 1 s). A stream the relay refused (429:
  // too many open, 401: the view session ended) closes for good: this page retries, waiting longer each
  // time, and shows the sign-in again once the view session is gone.
  var conn = document.getElementById("conn");
  var source = null;
  var backoff = 2000;
  var BACKOFF_MAX = 60000;
  function onMessage(m) {
    var data = JSON.parse(m.data);
    var live = document.getElementById("live");
    if (data.html !== undefined && live) {
      live.innerHTML = data.html;
      reopen(live);
      scrollToCurrent();
    }
    if (data.out !== undefined) appendOutput(data);
    if (data.gone) source.close();
    markUnseen();
    refreshAges();
    body.dataset.updates = String(parseInt(body.dataset.updates || "0", 10) + 1);
  }
  function retryLater() {
    var wait = backoff * (0.75 + Math.random() / 2);
    backoff = Math.min(backoff * 2, BACKOFF_MAX);
    body.dataset.retries = String(parseInt(body.dataset.retries || "0", 10) + 1);
    setTimeout(function () {
      fetch(location.href, {credentials: "same-origin", cache: "no-store"})
        .then(function (r) { if (r.status === 401) location.reload(); else connect(); })
        .catch(retryLater);
    }, wait);
  }
  function connect() {
    source = new EventSource(body.dataset.events);
    source.onopen = function () { backoff = 2000; conn.textContent = "live"; conn.className = "conn on"; };
    source.onerror = function () {
      conn.textContent = "reconnecting…"; conn.className = "conn off";
      if (source.readyState === EventSource.CLOSED) retryLater();
    };
    source.onmessage = onMessage;
  }
  if (body.dataset.events) connect();

  var signout = document.getElementById("signout");
  if (signout) {
    signout.addEventListener("click", function () {
      if (source) source.close();
      fetch("/ui/logout", {method: "POST", credentials: "same-origin"})
        .then(function () { location.reload(); });
    });
  }
  scrollToCurrent();
  markUnseen();

  var form = document.getElementById("login");
  if (form) {
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var token = document.getElementById("token").value;
      fetch("/ui/login", {method: "POST", credentials: "same-origin",
                          headers: {"Content-Type": "application/json"},
                          body: JSON.stringify({token: token})})
        .then(function (r) {
          if (r.ok) { location.reload(); return; }
          return r.json().then(function (e) { return e.error.message; }, function () { return r.statusText; })
            .then(function (why) { loginError(r.status === 401 ? "wrong token" : why); });
        }, function () { loginError("the relay did not answer"); });
    });
  }
  function loginError(text) {
    var el = document.getElementById("login-error");
    el.textContent = text;
    el.hidden = false;
  }
  body.dataset.ready = "1";  // every handler is in place: a click now is heard
})();
