"""``epsparql serve``: the engine as a long-running service.

The data flow, module by module: requests and MQTT messages come in
(:mod:`.http_api`, :mod:`.mqtt_bridge`), are read as the command line
reads a stream and handed to the engine room (:mod:`.engine_room`), which
logs them (:mod:`.durable`), pushes them into every deployment's engine
(:mod:`.registry` says what a deployment is) and hands the answers out to
subscribers (:mod:`.hub`), MQTT topics and answer files.  Who may do what:
:mod:`.tokens`.  What is going on: :mod:`.metrics`, :mod:`.live_view`,
:mod:`.openapi`.  See docs/SERVE.md.
"""
