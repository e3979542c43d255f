// The remote Invoker (Node): the wire format of `POST /internal/invoke` and its HTTP client.
export {
  decodeWire,
  encodeWire,
  errorFromWire,
  errorToWire,
  WIRE_STREAM_BYTES,
  type WireAnswer,
  type WireRequest,
} from "./codec.js";
export { RemoteInvoker, type RemoteInvokerOptions, RemoteInvokers } from "./remote-invoker.js";
