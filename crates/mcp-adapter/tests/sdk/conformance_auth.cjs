// Loaded into the MCP conformance suite's Node.js (NODE_OPTIONS=--require) by tests/conformance.rs
// (issue 35): the suite's clients send no credentials, and `serve --http` answers 401 to a request
// without a bearer token. This sets Node's global HTTP dispatcher, which both `fetch` and the
// suite's own `undici` use, to one that adds `Authorization: Bearer $CONFORMANCE_TOKEN` to every
// request. CONFORMANCE_UNDICI names the suite's undici package.
const { Agent, setGlobalDispatcher } = require(process.env.CONFORMANCE_UNDICI);

const bearer = `Bearer ${process.env.CONFORMANCE_TOKEN}`;

function withBearer(headers) {
  const out = {};
  if (Array.isArray(headers)) {
    if (headers.length > 0 && Array.isArray(headers[0])) {
      for (const [name, value] of headers) out[name] = value;
    } else {
      for (let i = 0; i + 1 < headers.length; i += 2) out[headers[i]] = headers[i + 1];
    }
  } else if (headers && typeof headers[Symbol.iterator] === "function") {
    for (const [name, value] of headers) out[name] = value;
  } else if (headers) {
    Object.assign(out, headers);
  }
  out.authorization = bearer;
  return out;
}

class WithBearer extends Agent {
  dispatch(options, handler) {
    return super.dispatch({ ...options, headers: withBearer(options.headers) }, handler);
  }
}

setGlobalDispatcher(new WithBearer());
