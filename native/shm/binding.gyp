{
  "targets": [
    {
      "target_name": "salus_shm",
      "sources": ["shm.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
