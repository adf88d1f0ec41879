// A shared object that loads but is no Kolo plugin (no entry point).
extern "C" __attribute__((visibility("default"))) int not_a_kolo_plugin() {
  return 0;
}
