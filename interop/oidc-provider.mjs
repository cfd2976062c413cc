// A real OAuth 2.0 authorization server for tests/tests/oauth.rs: `oidc-provider` (npm), a
// certified OpenID Connect provider, issuing access tokens for our MCP server with the
// client-credentials grant, and with the authorization-code grant to users who sign in on its
// pages.
//
// Usage:
//   node oidc-provider.mjs serve --keys <keys.json> --resource <url> [--resource <url>...]
//                                [--port <port>] [--alg RS256|ES256|EdDSA]
//                                [--read-only <login>...]
//                                [--access-ttl <seconds>] [--refresh-ttl <seconds>]
//                                [--dpop on]
//                                [--trust <issuer>=<keys.json>...] [--trust-idp <issuer>=<keys.json>...]
//       Listens on 127.0.0.1:<port> (--port, else $OIDC_PORT, else any free port), issuer
//       `http://127.0.0.1:<port>`, and prints `ready <issuer>` on stdout once it listens;
//       everything else goes to stderr. Runs until killed (or its stdin closes).
//   node oidc-provider.mjs keys <alg>
//       Prints a new private key set (JSON) for `serve --keys`: a signing key for <alg> and an
//       encryption key, which a resource server must not take for a signing key.
//   node oidc-provider.mjs sign <keys.json> <claims-json> [header-json]
//       Prints a JWT of <claims> signed with the set's signing key; the header (alg, kid,
//       `typ: at+jwt`) is the key's, each member overridden by <header> (`null` removes one).
//       With `"alg": "none"` the token is unsecured; with an HMAC `alg` (HS256…) the secret is
//       the signing key's public key as PEM (the algorithm-confusion attack).
//   node oidc-provider.mjs token <issuer> <client> <resource> <scope> [count]
//       Prints <count> (default 1) access tokens, one a line, from <issuer>'s token endpoint
//       (found in its metadata): the client-credentials grant of <client> (secret
//       `<client>-secret`, HTTP Basic) for <resource> with <scope>. The benchmarks use it
//       (`load oauth`).
//   node oidc-provider.mjs dpop-token <issuer> <client> <resource> <scope>
//       Makes a new ES256 key and prints, as JSON, `{ access_token, token_type, jwk }`: a
//       token bound to that key (RFC 9449) by the client-credentials grant, and the key's
//       private JWK (for `dpop-proof`). Needs `serve --dpop on`.
//   node oidc-provider.mjs dpop-proof <jwk-json> <claims-json> [header-json]
//       Prints a DPoP proof of <claims> signed with the private <jwk> (ES256): its header
//       `typ: dpop+jwt`, `alg`, and the public `jwk`, each member overridden by <header>. A
//       claim `ath_of: <token>` becomes that token's `ath` (base64url SHA-256).
//
// Configuration of `serve`:
//   - the client-credentials grant, with resource indicators (RFC 8707): the resources are
//     the --resource URLs, each with the scopes `users:read users:write`; access tokens are
//     JWTs signed with <alg> (RS256 by default), opaque for the client `opaque-reader`;
//   - the authorization-code grant with PKCE, for clients registered dynamically (RFC 7591):
//     a user signs in on the provider's development pages (any login, any password; the login
//     is the token's `sub`) and consents; a login named by --read-only gets `users:read` only;
//     access tokens live --access-ttl seconds (600 by default), refresh tokens --refresh-ttl
//     (14 days by default);
//   - introspection (RFC 7662), for confidential clients;
//   - with `--dpop on`, DPoP (RFC 9449): a token request with a proof gets a token bound to
//     its key (`token_type: DPoP`, `cnf.jkt`), and the metadata says so;
//   - the JWT bearer grant (RFC 7523, `urn:ietf:params:oauth:grant-type:jwt-bearer`) for the
//     client `workload`: the assertion is a workload's identity token (SEP-1933) from an issuer
//     named by `--trust <issuer>=<keys.json>` (its key set; private members are ignored), or an
//     identity assertion grant (ID-JAG, `typ: oauth-id-jag+jwt`, SEP-990) from an identity
//     provider named by `--trust-idp`, whose `client_id` is the client's and whose `resource`
//     is the one asked for. Its signature, `iss`, `aud` (this issuer or its token endpoint),
//     `exp` and `sub` are checked, `invalid_grant` (RFC 7523 §3.1) when any is wrong; the
//     access token (a JWT, bearer) is the assertion's `sub`'s, for the scopes asked that the
//     client may have;
//   - the token exchange (RFC 8693) of an ID token this provider issued (signed with its key,
//     `iss` this issuer, `aud` the client) for an ID-JAG naming the `audience` (an
//     authorization server) and the `resource` asked for, signed with this provider's key:
//     the enterprise identity provider of SEP-990, for the client `workload`;
//   - clients (client_secret_basic, the secret is `<id>-secret`): `reader` (users:read),
//     `writer` (users:read users:write), `opaque-reader` (users:read), `mcp-server`, the
//     resource server itself, which only introspects, and `workload` (users:read
//     users:write), a public client (`none`) of the JWT bearer grant and the token exchange.

import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createHash, createPublicKey } from 'node:crypto';
import * as jose from 'jose';

const SCOPES = 'users:read users:write';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_JAG = 'urn:ietf:params:oauth:token-type:id-jag';
const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';
// How long an ID-JAG this provider issues lives.
const ID_JAG_TTL = 300;
const ALGS = ['RS256', 'ES256', 'EdDSA'];

const [mode, ...args] = process.argv.slice(2);
const usage = () => {
  console.error(
    'usage: node oidc-provider.mjs serve --keys <keys.json> --resource <url>... [--port <port>] [--alg RS256|ES256|EdDSA]\n'
      + '       node oidc-provider.mjs keys <alg>\n'
      + '       node oidc-provider.mjs sign <keys.json> <claims-json> [header-json]\n'
      + '       node oidc-provider.mjs token <issuer> <client> <resource> <scope> [count]\n'
      + '       node oidc-provider.mjs dpop-token <issuer> <client> <resource> <scope>\n'
      + '       node oidc-provider.mjs dpop-proof <jwk-json> <claims-json> [header-json]',
  );
  process.exit(2);
};

const readKeys = (path) => {
  const set = JSON.parse(readFileSync(path, 'utf8'));
  if (!Array.isArray(set.keys) || set.keys.length === 0) {
    throw new Error(`${path} is not a key set`);
  }
  return set;
};

const signingKey = (set) => {
  const key = set.keys.find((k) => k.use === 'sig');
  if (!key) throw new Error('the key set has no signing key');
  return key;
};

async function newKeys(alg) {
  if (!ALGS.includes(alg)) throw new Error(`unsupported algorithm ${alg}: one of ${ALGS.join(', ')}`);
  const named = async (algorithm, use, options) => {
    const { privateKey } = await jose.generateKeyPair(algorithm, { extractable: true, ...options });
    const jwk = await jose.exportJWK(privateKey);
    const kid = await jose.calculateJwkThumbprint(jwk);
    return { ...jwk, kid, alg: algorithm, use };
  };
  return {
    keys: [
      await named(alg, 'sig'),
      await named('ECDH-ES', 'enc', { crv: 'X25519' }),
    ],
  };
}

async function sign(keysPath, claimsText, headerText) {
  const key = signingKey(readKeys(keysPath));
  const claims = JSON.parse(claimsText);
  const header = { alg: key.alg, kid: key.kid, typ: 'at+jwt', ...JSON.parse(headerText ?? '{}') };
  for (const [name, value] of Object.entries(header)) {
    if (value === null) delete header[name];
  }
  if (header.alg === 'none') {
    const b64 = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
    return `${b64(header)}.${b64(claims)}.`;
  }
  let secret;
  if (header.alg.startsWith('HS')) {
    const { d, p, q, dp, dq, qi, ...publicJwk } = key;
    const pem = createPublicKey({ key: publicJwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
    secret = new TextEncoder().encode(pem);
  } else {
    secret = await jose.importJWK(key, header.alg);
  }
  return new jose.SignJWT(claims).setProtectedHeader(header).sign(secret);
}

function options(list) {
  const found = { resource: [], readOnly: [], trust: [], trustIdp: [] };
  for (let i = 0; i < list.length; i += 2) {
    const [name, value] = [list[i], list[i + 1]];
    if (!name.startsWith('--') || value === undefined) usage();
    const key = name.slice(2);
    if (key === 'resource') found.resource.push(value);
    else if (key === 'read-only') found.readOnly.push(value);
    else if (key === 'trust') found.trust.push(value);
    else if (key === 'trust-idp') found.trustIdp.push(value);
    else found[key] = value;
  }
  return found;
}

// The issuers `<issuer>=<keys.json>` each names, each with a verifier of its signatures: the
// public members of its set's signing keys.
function trustedIssuers(list) {
  const found = new Map();
  for (const entry of list) {
    const at = entry.lastIndexOf('=');
    if (at <= 0) usage();
    found.set(entry.slice(0, at), publicKeys(readKeys(entry.slice(at + 1))));
  }
  return found;
}

// A verifier of the signatures of a key set's signing keys, without their private members.
function publicKeys(set) {
  const keys = set.keys
    .filter((k) => k.use !== 'enc')
    .map(({ d, p, q, dp, dq, qi, ...publicJwk }) => publicJwk);
  return jose.createLocalJWKSet({ keys });
}

// The scopes of a space-separated list.
const scopeList = (text) => (typeof text === 'string' ? text.split(' ').filter(Boolean) : []);

async function serve(list) {
  const { default: Provider, errors } = await import('oidc-provider');
  const opts = options(list);
  const alg = opts.alg ?? 'RS256';
  if (!ALGS.includes(alg)) usage();
  if (!opts.keys || opts.resource.length === 0) usage();
  const keys = readKeys(opts.keys);
  const workloads = trustedIssuers(opts.trust);
  const idps = trustedIssuers(opts.trustIdp);
  const port = Number(opts.port ?? process.env.OIDC_PORT ?? 0);

  const server = createServer();
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const issuer = `http://127.0.0.1:${server.address().port}`;

  const client = (id, scope, grants = ['client_credentials']) => ({
    client_id: id,
    client_secret: `${id}-secret`,
    grant_types: grants,
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
    ...(scope ? { scope } : {}),
  });

  const resourceServerInfo = (resource, forClient, account) => {
    if (!opts.resource.includes(resource)) throw new errors.InvalidTarget();
    const opaque = forClient.clientId === 'opaque-reader';
    const readOnly = account !== undefined && opts.readOnly.includes(account);
    return {
      scope: readOnly ? 'users:read' : SCOPES,
      audience: resource,
      accessTokenTTL: Number(opts['access-ttl'] ?? 600),
      accessTokenFormat: opaque ? 'opaque' : 'jwt',
      ...(opaque ? {} : { jwt: { sign: { alg } } }),
    };
  };

  const provider = new Provider(issuer, {
    ttl: {
      RefreshToken: () => Number(opts['refresh-ttl'] ?? 14 * 24 * 3600),
      Interaction: 3600,
      Session: 3600,
      Grant: 3600,
      AccessToken: () => Number(opts['access-ttl'] ?? 600),
    },
    // The login a user signs in with is their account, and their tokens' `sub`.
    findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
    clients: [
      client('reader', 'users:read'),
      client('writer', SCOPES),
      client('opaque-reader', 'users:read'),
      client('mcp-server', undefined, []),
      {
        ...client('workload', SCOPES, [JWT_BEARER, TOKEN_EXCHANGE]),
        client_secret: undefined,
        token_endpoint_auth_method: 'none',
      },
    ],
    jwks: keys,
    // The key set has one signing key: what is signed, ID tokens included, uses its algorithm.
    clientDefaults: { id_token_signed_response_alg: alg },
    // The scopes a client may ask for are its `scope` only.
    // `offline_access`: users who sign in get refresh tokens.
    scopes: ['openid', 'offline_access', ...SCOPES.split(' ')],
    features: {
      // The provider's own sign-in and consent pages, which a test walks as a browser would.
      devInteractions: { enabled: true },
      registration: { enabled: true },
      // Encryption keys in the published set beside the signing keys, as real servers have.
      encryption: { enabled: true },
      clientCredentials: { enabled: true },
      dPoP: { enabled: opts.dpop === 'on' },
      introspection: {
        enabled: true,
        // Only a confidential client (here, the resource server) learns about tokens.
        allowedPolicy: async (_ctx, caller) => caller.clientAuthMethod !== 'none',
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => undefined,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (ctx, resource, forClient) => {
          // At the token endpoint the grant names the user: a read-only one gets less.
          const account = ctx.oidc.entities?.Grant?.accountId;
          return resourceServerInfo(resource, forClient, account);
        },
      },
    },
  });
  provider.proxy = false;
  registerAssertionGrants(provider, errors, {
    keys, workloads, idps, resourceServerInfo, resources: opts.resource,
  });
  for (const event of ['grant.error', 'introspection.error', 'server_error']) {
    provider.on(event, (_ctx, error) => console.error(`oidc-provider: ${event}: ${error.message} ${error.error_description ?? ''}`));
  }
  const actingFor = (ctx) => ctx.oidc.entities?.Grant?.accountId ?? ctx.oidc.entities?.AccessToken?.accountId;
  provider.on('grant.success', (ctx) => console.error(`oidc-provider: token for ${ctx.oidc.client?.clientId}${actingFor(ctx) ? ` acting for ${actingFor(ctx)}` : ''}${ctx.body?.refresh_token ? ', with a refresh token' : ''} (scope ${ctx.body?.scope})`));
  for (const event of ['authorization.error', 'registration_create.error']) {
    provider.on(event, (_ctx, error) => console.error(`oidc-provider: ${event}: ${error.message} ${error.error_description ?? ''}`));
  }
  server.on('request', provider.callback());

  const stop = () => server.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.stdin.on('end', stop);
  process.stdin.resume();

  console.error(`oidc-provider: ${issuer}, ${alg}, resources ${opts.resource.join(' ')}`);
  console.log(`ready ${issuer}`);
  // Whoever started us reads stdout up to that line only: the provider's own notices go to
  // stderr.
  console.log = console.info = console.warn = console.error;
}

// The JWT bearer grant (RFC 7523) and the token exchange of an ID token for an ID-JAG
// (RFC 8693, SEP-990) on `provider`.
function registerAssertionGrants(provider, errors, { keys, workloads, idps, resourceServerInfo, resources }) {
  const { issuer } = provider;
  const tokenEndpoint = provider.urlFor('token');
  // The reason is the error's description: a test (and its reader) sees which check failed.
  const refuse = (why) => Object.assign(new errors.InvalidGrant(why), { error_description: why });
  // The scopes of `asked` the client may have (else `invalid_scope`, as for the other
  // grants), those of `within` only when it is given.
  const scopesFor = (client, asked, within) => {
    const allowed = new Set(scopeList(client.scope));
    for (const scope of scopeList(asked)) {
      if (!allowed.has(scope)) throw new errors.InvalidScope('requested scope is not allowed', scope);
    }
    return scopeList(asked).filter((s) => within === undefined || within.has(s));
  };
  const oneResource = (resource) => {
    if (typeof resource !== 'string') throw new errors.InvalidTarget('one resource indicator is needed');
    return resource;
  };

  provider.registerGrantType(JWT_BEARER, async (ctx) => {
    const { client, params } = ctx.oidc;
    if (!params.assertion) throw new errors.InvalidRequest("missing required parameter 'assertion'");
    const resource = oneResource(params.resource);
    let claimed;
    try {
      claimed = jose.decodeJwt(params.assertion);
    } catch {
      throw refuse('the assertion is not a JWT');
    }
    const idp = idps.get(claimed.iss);
    const verifier = idp ?? workloads.get(claimed.iss);
    if (!verifier) throw refuse('the assertion\'s issuer is not trusted');
    let payload;
    try {
      ({ payload } = await jose.jwtVerify(params.assertion, verifier, {
        issuer: claimed.iss,
        audience: [issuer, tokenEndpoint],
        requiredClaims: ['iss', 'sub', 'aud', 'exp'],
        ...(idp ? { typ: 'oauth-id-jag+jwt' } : {}),
      }));
    } catch (e) {
      throw refuse(`the assertion is refused (${e.code ?? 'invalid'}): ${e.message}`);
    }
    if (typeof payload.sub !== 'string' || payload.sub === '') throw refuse('the assertion names no subject');
    if (idp) {
      if (payload.client_id !== client.clientId) throw refuse('the ID-JAG is for another client');
      if (payload.resource !== undefined && payload.resource !== resource) {
        throw refuse('the ID-JAG is for another resource');
      }
    }
    const info = resourceServerInfo(resource, client, payload.sub);
    const granted = new Set(scopeList(info.scope));
    const asserted = idp && typeof payload.scope === 'string' ? new Set(scopeList(payload.scope)) : undefined;
    const scope = scopesFor(client, params.scope, asserted)
      .filter((s) => granted.has(s))
      .join(' ') || undefined;
    const token = new provider.AccessToken({ accountId: payload.sub, client, gty: 'jwt_bearer', scope });
    token.resourceServer = new provider.ResourceServer(resource, info);
    ctx.oidc.entity('AccessToken', token);
    const value = await token.save();
    ctx.body = {
      access_token: value,
      expires_in: token.expiration,
      token_type: token.tokenType,
      ...(scope ? { scope } : {}),
    };
  }, ['assertion', 'scope', 'resource']);

  const own = publicKeys(keys);
  const signing = signingKey(keys);
  provider.registerGrantType(TOKEN_EXCHANGE, async (ctx) => {
    const { client, params } = ctx.oidc;
    for (const name of ['subject_token', 'subject_token_type', 'requested_token_type', 'audience']) {
      if (!params[name]) throw new errors.InvalidRequest(`missing required parameter '${name}'`);
    }
    if (params.subject_token_type !== ID_TOKEN) {
      throw new errors.InvalidRequest(`subject_token_type must be ${ID_TOKEN}`);
    }
    if (params.requested_token_type !== ID_JAG) {
      throw new errors.InvalidRequest(`requested_token_type must be ${ID_JAG}`);
    }
    const resource = oneResource(params.resource);
    // The identity provider decides which server an agent reaches.
    if (!resources.includes(resource)) throw new errors.InvalidTarget();
    let payload;
    try {
      ({ payload } = await jose.jwtVerify(params.subject_token, own, {
        issuer,
        audience: client.clientId,
        requiredClaims: ['sub', 'exp'],
      }));
    } catch (e) {
      throw refuse(`the ID token is refused (${e.code ?? 'invalid'}): ${e.message}`);
    }
    const scope = scopesFor(client, params.scope).join(' ') || undefined;
    const now = Math.floor(Date.now() / 1000);
    const jag = await new jose.SignJWT({
      sub: payload.sub,
      client_id: client.clientId,
      resource,
      jti: crypto.randomUUID(),
      ...(scope ? { scope } : {}),
    })
      .setProtectedHeader({ alg: signing.alg, kid: signing.kid, typ: 'oauth-id-jag+jwt' })
      .setIssuer(issuer)
      .setAudience(params.audience)
      .setIssuedAt(now)
      .setExpirationTime(now + ID_JAG_TTL)
      .sign(await jose.importJWK(signing, signing.alg));
    ctx.body = {
      access_token: jag,
      issued_token_type: ID_JAG,
      token_type: 'N_A',
      expires_in: ID_JAG_TTL,
      ...(scope ? { scope } : {}),
    };
  }, ['subject_token', 'subject_token_type', 'requested_token_type', 'audience', 'resource', 'scope']);
}

async function tokens(issuer, client, resource, scope, count = '1') {
  const metadata = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
  const basic = Buffer.from(`${client}:${client}-secret`).toString('base64');
  const out = [];
  for (let i = 0; i < Number(count); i += 1) {
    const answer = await fetch(metadata.token_endpoint, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope }),
    });
    const body = await answer.json();
    if (!body.access_token) throw new Error(`no token for ${client}: ${JSON.stringify(body)}`);
    out.push(body.access_token);
  }
  return out.join('\n');
}

async function dpopProof(jwkText, claimsText, headerText) {
  const jwk = JSON.parse(jwkText);
  const key = await jose.importJWK(jwk, 'ES256');
  const { d: _private, ...publicJwk } = jwk;
  const header = { typ: 'dpop+jwt', alg: 'ES256', jwk: publicJwk };
  for (const [name, value] of Object.entries(JSON.parse(headerText ?? '{}'))) {
    if (value === null) delete header[name];
    else header[name] = value;
  }
  const claims = JSON.parse(claimsText);
  if (claims.ath_of !== undefined) {
    claims.ath = createHash('sha256').update(claims.ath_of, 'ascii').digest('base64url');
    delete claims.ath_of;
  }
  return new jose.SignJWT(claims).setProtectedHeader(header).sign(key);
}

async function dpopToken(issuer, client, resource, scope) {
  const metadata = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
  const { privateKey } = await jose.generateKeyPair('ES256', { extractable: true });
  const jwk = await jose.exportJWK(privateKey);
  const proof = await dpopProof(
    JSON.stringify(jwk),
    JSON.stringify({
      jti: crypto.randomUUID(),
      htm: 'POST',
      htu: metadata.token_endpoint,
      iat: Math.floor(Date.now() / 1000),
    }),
  );
  const basic = Buffer.from(`${client}:${client}-secret`).toString('base64');
  const answer = await fetch(metadata.token_endpoint, {
    method: 'POST',
    headers: {
      authorization: `Basic ${basic}`,
      'content-type': 'application/x-www-form-urlencoded',
      dpop: proof,
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope }),
  });
  const body = await answer.json();
  if (!body.access_token) throw new Error(`no DPoP token for ${client}: ${JSON.stringify(body)}`);
  return JSON.stringify({ access_token: body.access_token, token_type: body.token_type, jwk });
}

try {
  switch (mode) {
    case 'serve':
      await serve(args);
      break;
    case 'keys':
      if (args.length !== 1) usage();
      console.log(JSON.stringify(await newKeys(args[0])));
      break;
    case 'sign':
      if (args.length < 2 || args.length > 3) usage();
      console.log(await sign(...args));
      break;
    case 'token':
      if (args.length < 4 || args.length > 5) usage();
      console.log(await tokens(...args));
      break;
    case 'dpop-token':
      if (args.length !== 4) usage();
      console.log(await dpopToken(...args));
      break;
    case 'dpop-proof':
      if (args.length < 2 || args.length > 3) usage();
      console.log(await dpopProof(...args));
      break;
    default:
      usage();
  }
} catch (error) {
  console.error(`oidc-provider.mjs: ${error.stack ?? error}`);
  process.exit(1);
}
