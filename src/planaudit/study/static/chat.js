// The assistant's reply as it is written, never required: with script, the ask form is
// posted to its stream route (/s/<token>/phase2/ask), the message and the growing reply
// are shown in #messages (aria-busy meanwhile) with Send disabled, and at the end the
// page the server renders is loaded (the reply's proposal judged, its "Use this plan as
// mine" button). Whatever the route answers with no stream is left to the form post,
// which works as without script.
(function () {
  "use strict";
  var form = document.getElementById("ask");
  var list = document.getElementById("messages");
  if (!form || !list || !window.fetch || !window.TextDecoder) return;
  var button = form.querySelector("button[type=submit]");
  var box = form.querySelector("textarea[name=message]");

  function said(cls, who, text) {
    var li = document.createElement("li");
    li.className = cls;
    var name = document.createElement("span");
    name.className = "who";
    name.textContent = who;
    var body = document.createElement("div");
    body.className = "said";
    body.textContent = text;
    li.appendChild(name);
    li.appendChild(body);
    list.appendChild(li);
    return body;
  }

  function show(url) {  // the server's page, fetched anew (not only scrolled to #chat)
    history.scrollRestoration = "manual";
    history.replaceState(null, "", url);
    location.reload();
  }

  function asForm() {  // the post as without script (its key makes a second post harmless)
    HTMLFormElement.prototype.submit.call(form);
  }

  function refused(message) {  // nothing was stored: said, and the message can be sent again
    var note = document.getElementById("ask-error");
    if (!note) {
      note = document.createElement("p");
      note.id = "ask-error";
      note.className = "error";
      note.setAttribute("role", "alert");
      form.insertBefore(note, form.firstChild);
    }
    note.textContent = message;
    list.removeAttribute("aria-busy");
    button.disabled = false;
  }

  // one server-sent event ("event: name\ndata: json") as [name, data]
  function parse(block) {
    var name = "message", data = "";
    block.split("\n").forEach(function (line) {
      if (line.indexOf("event: ") === 0) name = line.slice(7);
      else if (line.indexOf("data: ") === 0) data += line.slice(6);
    });
    return [name, data ? JSON.parse(data) : null];
  }

  async function send(event) {
    event.preventDefault();
    if (button.disabled) return;
    button.disabled = true;
    list.setAttribute("aria-busy", "true");  // a reply on its way (until the page is loaded)
    var body = new URLSearchParams(new FormData(form));
    var url = new URL(form.action);
    url.hash = "";
    url.pathname += "/ask";
    var response;
    try {
      response = await fetch(url, {method: "POST", body: body, credentials: "same-origin"});
    } catch (e) {
      asForm();
      return;
    }
    if ((response.headers.get("content-type") || "").indexOf("text/event-stream") !== 0) {
      asForm();
      return;
    }
    var reply = null, buffer = "", end = null;
    if (response.ok) {  // the message is stored: shown, and the reply under it as it comes
      said("you", "You", box.value.trim());
      box.value = "";
      reply = said("assistant", "Assistant", "");
      reply.parentNode.id = "streaming";
      reply.setAttribute("aria-live", "polite");
    }
    var reader = response.body.getReader(), decoder = new TextDecoder();
    for (;;) {
      var chunk = await reader.read();
      if (chunk.done) break;
      buffer += decoder.decode(chunk.value, {stream: true});
      var blocks = buffer.split("\n\n");
      buffer = blocks.pop();
      for (var i = 0; i < blocks.length; i++) {
        var ev = parse(blocks[i]);
        if (ev[0] === "text" && reply !== null) reply.textContent += ev[1];
        else if (ev[0] === "done" || ev[0] === "error") end = ev;
      }
    }
    if (end === null) {  // the stream broke off: the page as the records now hold it
      show(form.action);
    } else if (end[0] === "error" && !end[1].url) {
      refused(end[1].message);
    } else if (end[0] === "error") {  // stored with its error: said, as the page says it
      reply.parentNode.classList.add("unavailable");
      reply.textContent = end[1].message;
      show(end[1].url);
    } else {
      show(end[1].url);
    }
  }

  form.addEventListener("submit", send);
})();
