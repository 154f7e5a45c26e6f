# Fixed version of positive/canine_qa_distill_clamp_labels.py.
# Source: https://github.com/huggingface/transformers/pull/12026 (the usual fix on the user's
#   side; the pull request's out-of-place clamp is not in CANINE's head).
# Fix: the teacher gets copies of the label tensors, so its in-place clamp does not touch the
#   targets the student's loss saved.
import torch
import torch.nn.functional as F
from transformers import CanineConfig, CanineForQuestionAnswering

torch.manual_seed(0)
config = CanineConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                      intermediate_size=32, downsampling_rate=2, num_hash_buckets=64,
                      num_hash_functions=2, local_transformer_stride=4)
student = CanineForQuestionAnswering(config)
teacher = CanineForQuestionAnswering(config).eval()
optimizer = torch.optim.AdamW(student.parameters(), lr=1e-4)

input_ids = torch.randint(0, 200, (2, 8))
start_positions = torch.tensor([3, 99])  # the second answer lies outside the sequence
end_positions = torch.tensor([5, 99])

outputs = student(input_ids=input_ids, start_positions=start_positions,
                  end_positions=end_positions)
with torch.no_grad():
    teacher_outputs = teacher(input_ids=input_ids, start_positions=start_positions.clone(),  # [fix]
                              end_positions=end_positions.clone())
kd = F.kl_div(F.log_softmax(outputs.start_logits, -1),
              F.softmax(teacher_outputs.start_logits, -1), reduction="batchmean")
loss = outputs.loss + kd
loss.backward()
optimizer.step()
print("loss", loss.item())
