;; Seven blocks, two towers merged into one interleaved tower built
;; on d, the bottom of the first tower: both towers are dismantled
;; and rebuilt, most blocks moving twice.
;; Initial towers (top -> bottom): a b c d | e f g
(define (problem blocksworld-p08)
  (:domain blocksworld)
  (:objects a b c d e f g - block)
  (:init
    (clear a)
    (on a b)
    (on b c)
    (on c d)
    (ontable d)
    (clear e)
    (on e f)
    (on f g)
    (ontable g)
    (handempty))
  (:goal (and
    (on a e)
    (on e b)
    (on b f)
    (on f c)
    (on c g)
    (on g d)
    (ontable d))))
