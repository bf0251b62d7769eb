# Embeds the GPU rate table (scenarios/gpus/rates.yaml) in the program as
# bytes, so the installed program needs no data file beside it; gpu_rates.c
# parses them on first use. Run by the build:
#   cmake -DIN=rates.yaml -DNAME=scenarios/gpus/rates.yaml -DOUT=gpu_rates_data.c -P gpu_rates_embed.cmake
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}.tmp"
  "/* Generated from ${NAME} by gpu_rates_embed.cmake: do not edit. */\n"
  "#include <stddef.h>\n"
  "const char gpu_rates_yaml_name[] = \"${NAME}\";\n"
  "const size_t gpu_rates_yaml_len = ${len};\n"
  "const unsigned char gpu_rates_yaml[${len} + 1] = {\n${bytes}0};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
