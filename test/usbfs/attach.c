/*
 * `attach(name)`: puts the calling Node process under the usbfs supervisor listening on the
 * abstract socket `name` (seccomp-attach.h), so that the real `usb` package in this process sees
 * the emulated printers. Test tooling; built by usb-stack.ts with the C compiler, no node-gyp.
 *
 * The few Node-API functions used are declared here rather than taken from node_api.h: their
 * C ABI is stable across Node versions, and this way no Node headers need to be installed.
 */
#include "seccomp-attach.h"

typedef struct napi_env__ *napi_env;
typedef struct napi_value__ *napi_value;
typedef struct napi_callback_info__ *napi_callback_info;
typedef int napi_status;
typedef napi_value (*napi_callback)(napi_env env, napi_callback_info info);

extern napi_status napi_get_cb_info(napi_env, napi_callback_info, size_t *, napi_value *, napi_value *, void **);
extern napi_status napi_get_value_string_utf8(napi_env, napi_value, char *, size_t, size_t *);
extern napi_status napi_throw_error(napi_env, const char *, const char *);
extern napi_status napi_create_function(napi_env, const char *, size_t, napi_callback, void *, napi_value *);
extern napi_status napi_set_named_property(napi_env, napi_value, const char *, napi_value);
extern napi_status napi_get_undefined(napi_env, napi_value *);

static napi_value attach(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_value undefined;
  napi_get_undefined(env, &undefined);
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != 0 || argc < 1) {
    napi_throw_error(env, "USBFS_ATTACH", "attach(name): the supervisor's socket name is missing");
    return undefined;
  }
  char name[108];
  size_t len = 0;
  if (napi_get_value_string_utf8(env, argv[0], name, sizeof name, &len) != 0) {
    napi_throw_error(env, "USBFS_ATTACH", "attach(name): name must be a string");
    return undefined;
  }
  char err[256];
  if (usbfs_attach(name, err, sizeof err) < 0) napi_throw_error(env, "USBFS_ATTACH", err);
  return undefined;
}

napi_value napi_register_module_v1(napi_env env, napi_value exports) {
  napi_value fn;
  if (napi_create_function(env, "attach", 6, attach, NULL, &fn) == 0)
    napi_set_named_property(env, exports, "attach", fn);
  return exports;
}
