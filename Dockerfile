# servesim on Debian 12 (docs/packaging.md#docker). Two stages: the first installs the build
# dependencies (scripts/install-deps.sh), builds Release, runs the install test and packs the
# .deb; the second installs only that .deb, whose Depends pulls in the runtime libraries.
#
#   docker build -t servesim .
#   docker run --rm servesim --help
#   docker run --rm -v "$PWD/out:/out" servesim run --out /out/default
#   docker run --rm servesim run /usr/share/servesim/configs/examples/tiny-trace.yaml
FROM debian:bookworm AS build
COPY . /src
WORKDIR /src
RUN bash scripts/install-deps.sh
# A fresh build folder, whatever the context carried. MPI off: the image runs one process.
# No test suite here (scripts/test.sh is for that); the install test runs on its own.
RUN cmake -S /src -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSERVESIM_MPI=OFF \
          -DSERVESIM_BUILD_TESTS=OFF \
 && cmake --build /build \
 && bash tests/cli/install_test.sh cmake /build /tmp/install-test lib/python3/dist-packages \
         "$(ls /build/python/servesim*.so >/dev/null 2>&1 && command -v python3)" \
 && cd /build && cpack -G DEB && mv servesim_*.deb /servesim.deb

FROM debian:bookworm-slim
COPY --from=build /servesim.deb /tmp/servesim.deb
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends /tmp/servesim.deb \
 && rm -rf /var/lib/apt/lists/* /tmp/servesim.deb
WORKDIR /work
ENTRYPOINT ["servesim"]
CMD ["--help"]
