/**
 * A loopback URL where nothing listens, for tests of "the API is down" (issue 41). Port 4 of
 * 127.0.0.1 (unassigned; not on fetch's list of blocked ports, as 1 is) lies below the
 * ephemeral range that `freePort()` and every `listen(0)` of the suite draw from, and nothing
 * here binds it, so another test's server can never start listening there between a test
 * choosing it and connecting, as it could on a port `freePort()` gave back (a clean-clone CI run
 * failed so: the CLI reached another test's API and exited 0).
 */
export const CLOSED_URL = 'http://127.0.0.1:4';
